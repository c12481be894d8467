package main

import (
	"fmt"
	"io"
	"regexp"
	"strings"
)

// showTextWidth is how wide the text of a `models show` row may run after
// its key (the widest key, "emulated as", and the table's padding take the
// rest of 80 columns).
const showTextWidth = 66

// wrapWords breaks s into lines of at most width runes at spaces; a word
// longer than width has a line of its own.
func wrapWords(s string, width int) []string { return wrapHanging(s, width, width) }

// unitAfterNumber is a space between a number and its unit ("23.5 GiB",
// "5 ms"), which a line does not break at.
var unitAfterNumber = regexp.MustCompile(`(\d) ([KMGT]i?B|B|[µnm]?s|req/s)\b`)

// nbsp joins a number to its unit while a text wraps.
const nbsp = "\u00a0"

// wrapHanging is wrapWords with a first line of at most first runes and the
// others of at most rest. It breaks lines at spaces, but not between a
// number and its unit.
func wrapHanging(s string, first, rest int) []string {
	var lines []string
	line, width := "", first
	words := strings.FieldsFunc(unitAfterNumber.ReplaceAllString(s, "$1"+nbsp+"$2"), func(r rune) bool {
		return r == ' ' || r == '\t' || r == '\n'
	})
	for _, word := range words {
		switch {
		case line == "":
			line = word
		case len([]rune(line))+1+len([]rune(word)) <= width:
			line += " " + word
		default:
			lines = append(lines, line)
			line, width = word, rest
		}
	}
	if line != "" || len(lines) == 0 {
		lines = append(lines, line)
	}
	for i := range lines {
		lines[i] = strings.ReplaceAll(lines[i], nbsp, " ")
	}
	return lines
}

// writeWrappedRow writes a key-value row of a table whose text may be long:
// the key on its first line, the text wrapped to showTextWidth.
func writeWrappedRow(tw io.Writer, key, text string) {
	for i, line := range wrapWords(text, showTextWidth) {
		if i > 0 {
			key = ""
		}
		fmt.Fprintf(tw, "%s\t%s\n", key, line)
	}
}

// writeWrappedLine writes text wrapped to 80 columns: each of its lines
// keeps its own indent, and the lines a long one breaks into are indented by
// two more. A word wider than that (a long cgroup path) has a line of its
// own.
func writeWrappedLine(w io.Writer, text string) {
	for _, para := range strings.Split(text, "\n") {
		indent := para[:len(para)-len(strings.TrimLeft(para, " "))]
		width := 80 - len(indent)
		for i, line := range wrapHanging(para, width, width-2) {
			if i > 0 {
				line = "  " + line
			}
			fmt.Fprintln(w, indent+line)
		}
	}
}
