// Package configerr words configuration mistakes so that an operator can
// act on them: yaml.v3's decoding errors on one line with the line in the
// file and the section as the file writes it rather than a Go type name,
// and, for a key no field takes (in YAML or in Triton's model
// configuration), the field most likely meant.
package configerr

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"
)

// Section is one struct type of a YAML document as an operator reads it.
type Section struct {
	// Where places it in a message: "at the top level", "in scheduler",
	// "in an inputs entry".
	Where string
	// Keys maps each YAML key it takes to the name a suggestion shows
	// ("scheduler.policy"; an entry's keys by themselves).
	Keys map[string]string
}

// Sections lists the struct types reachable from root by their Go type
// name, as yaml.v3 names them in errors. A field of a type in entries is
// read as a list of the type entries gives (a type with its own
// UnmarshalYAML that decodes a list); slices of structs are lists too.
func Sections(root reflect.Type, entries map[reflect.Type]reflect.Type) map[string]Section {
	out := map[string]Section{}
	var walk func(t reflect.Type, prefix string)
	walk = func(t reflect.Type, prefix string) {
		if _, seen := out[t.Name()]; seen || t.Kind() != reflect.Struct {
			return
		}
		list := strings.HasSuffix(prefix, "[]")
		where := "in " + prefix
		switch {
		case prefix == "":
			where = "at the top level"
		case list:
			where = "in " + article(prefix) + " " + strings.TrimSuffix(prefix, "[]") + " entry"
		}
		keys := map[string]string{}
		out[t.Name()] = Section{Where: where, Keys: keys}
		for i := range t.NumField() {
			sf := t.Field(i)
			name := Key(sf)
			if name == "" {
				continue
			}
			p := name
			if prefix != "" && !list {
				p = prefix + "." + name
			}
			keys[name] = p
			ft := sf.Type
			if e, ok := entries[ft]; ok {
				walk(e, p+"[]")
				continue
			}
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Slice {
				walk(ft.Elem(), p+"[]")
			} else {
				walk(ft, p)
			}
		}
	}
	walk(root, "")
	return out
}

// Key is the YAML key a struct field is read from; "" for a field YAML
// does not read (no tag, or "-").
func Key(sf reflect.StructField) string {
	name, _, _ := strings.Cut(sf.Tag.Get("yaml"), ",")
	if name == "-" {
		return ""
	}
	return name
}

func article(word string) string {
	if strings.ContainsRune("aeiou", rune(word[0])) {
		return "an"
	}
	return "a"
}

// unknownField matches yaml.v3's message for a key no field takes.
var unknownField = regexp.MustCompile(`field (\S+) not found in type (?:[\w.]+\.)?(\w+)`)

// Clean returns err's message on one line: yaml.v3's errors joined with
// "; ", each unknown key reworded with its section from known and a guess
// at the field meant ("line 4: unknown field "polcy" in scheduler (did you
// mean scheduler.policy?)"), a value of the wrong type said in words
// ("line 1: want a mapping (key: value), not a list"). CleanIn also names
// the key of each value.
func Clean(err error, known map[string]Section) string {
	return CleanIn(err, known, nil)
}

// clean is Clean with each message then passed through each.
func clean(err error, known map[string]Section, each func(string) string) string {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return each(strings.TrimPrefix(err.Error(), "yaml: "))
	}
	msgs := make([]string, 0, len(te.Errors))
	for _, m := range te.Errors {
		if sub := unknownField.FindStringSubmatchIndex(m); sub != nil {
			name, typ := m[sub[2]:sub[3]], m[sub[4]:sub[5]]
			sec, ok := known[typ]
			if !ok {
				sec.Where = "in " + typ
			}
			m = m[:sub[0]] + fmt.Sprintf("unknown field %q %s%s", name, sec.Where, DidYouMean(name, sec.Keys)) + m[sub[1]:]
		}
		msgs = append(msgs, each(m))
	}
	return strings.Join(msgs, "; ")
}

// DidYouMean returns " (did you mean X?)" when exactly one of the known
// names is a likely misspelling of name (one edit away, two for names of
// six letters or more) or a shortening or lengthening of it (max_batch for
// max_batch_size; four letters at least), X being what known maps it to;
// else "".
func DidYouMean(name string, known map[string]string) string {
	limit := max(1, min(2, len(name)/3))
	var found string
	for k, shown := range known {
		var short, long string
		if len(k) < len(name) {
			short, long = k, name
		} else {
			short, long = name, k
		}
		prefix := len(short) >= 4 && strings.HasPrefix(long, short)
		if !prefix && EditDistance(name, k) > limit {
			continue
		}
		if found != "" {
			return "" // ambiguous
		}
		found = shown
	}
	if found == "" {
		return ""
	}
	return " (did you mean " + found + "?)"
}

// EditDistance is the optimal string alignment distance between a and b,
// by bytes (configuration names are ASCII): insertions, deletions,
// substitutions and swaps of two neighbours ("listne") each count one.
func EditDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}
