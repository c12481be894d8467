package configerr

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// AtNode is err, a refusal of n's value by an UnmarshalYAML method, as a
// type error of yaml.v3's: the decoder then goes on and reports every
// mistake of a document together, not only the first value refused. Its
// message starts "line L column C: " so that CleanIn can name the key of
// exactly that node (one of several on a line written [20, x]) and then
// words it as yaml.v3's own, "line L: key: …".
func AtNode(n *yaml.Node, err error) error {
	return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d column %d: %v", n.Line, n.Column, err)}}
}

// lineMessage matches a message that starts with its line in the file,
// and the column of AtNode's.
var lineMessage = regexp.MustCompile(`^line (\d+)(?: column (\d+))?: `)

// mismatch matches yaml.v3's message for a value of the wrong type.
var mismatch = regexp.MustCompile("cannot unmarshal !!(\\w+) (?:`([^`]*)` )?into (\\S+)")

// CleanIn is Clean for the document doc (nil: none at hand): a message at
// a line where doc has a key's value also names the key ("line 2:
// limits.max_connections: "lots" is not a whole number"), and yaml.v3's
// type mismatches say what the key takes rather than Go's type.
func CleanIn(err error, known map[string]Section, doc *yaml.Node) string {
	return clean(err, known, func(m string) string { return placeValue(m, doc) })
}

// placeValue rewords m, one message, with the key whose value doc has at
// m's line.
func placeValue(m string, doc *yaml.Node) string {
	at := lineMessage.FindStringSubmatch(m)
	if at == nil || strings.Contains(m, "unknown field ") {
		return m
	}
	rest, value, container := m[len(at[0]):], "", false
	if sub := mismatch.FindStringSubmatch(rest); sub != nil {
		rest, value, container = mismatchWords(sub[1], sub[2], sub[3]), sub[2], sub[1] == "seq" || sub[1] == "map"
	}
	line, _ := strconv.Atoi(at[1])
	where := "line " + at[1] + ": "
	key := ""
	if at[2] != "" {
		column, _ := strconv.Atoi(at[2])
		key = keyOfNode(doc, line, column)
	} else {
		key = keyAt(doc, line, value, container)
	}
	if key != "" {
		return where + key + ": " + rest
	}
	return where + rest
}

// mismatchWords says that a value of YAML tag tag (its text value, ""
// for a list or a mapping) is not what a Go type goType takes.
func mismatchWords(tag, value, goType string) string {
	want := "a " + goType
	switch {
	case strings.HasPrefix(goType, "[]"):
		want = "a list"
	case strings.HasPrefix(goType, "map["), strings.Contains(goType, "."): // a map, or a struct: a section
		want = "a mapping (key: value)"
	case strings.HasPrefix(goType, "uint"):
		want = "a whole number, 0 or more"
	case strings.HasPrefix(goType, "int"):
		want = "a whole number"
	case strings.HasPrefix(goType, "float"):
		want = "a number"
	case goType == "bool":
		want = "true or false"
	case goType == "string":
		want = "a string"
	}
	switch tag {
	case "seq":
		return "want " + want + ", not a list"
	case "map":
		return "want " + want + ", not a mapping"
	}
	return strconv.Quote(value) + " is not " + want
}

// keyAt is the path of the deepest value doc has at line ("limits.
// max_connections", "partitioning.sizes[1]"), of the value written value
// when it is not "" and one is (a list written on one line), of a list or a
// mapping when container; "" when none is there.
func keyAt(doc *yaml.Node, line int, value string, container bool) string {
	var found, exact string
	eachValue(doc, func(path string, v *yaml.Node, inList bool) bool {
		scalar := v.Kind == yaml.ScalarNode
		fits := !container || !scalar // a mapping's value
		if inList {
			fits = scalar && !container // a list's item: an item written on the list's line
		}
		if v.Line == line && fits {
			found = path
			if value != "" && scalar && v.Value == value {
				exact = path
			}
		}
		return true
	})
	if exact != "" {
		return exact
	}
	return found
}

// keyOfNode is the path of the value doc has at line and column; "" when
// none starts there.
func keyOfNode(doc *yaml.Node, line, column int) string {
	var found string
	eachValue(doc, func(path string, v *yaml.Node, _ bool) bool {
		if v.Line == line && v.Column == column {
			found = path
		}
		return found == ""
	})
	return found
}

// eachValue calls visit with every value of doc (nil: none), a mapping's
// values and a list's items at any depth, in the document's order, with its
// path ("limits.max_connections", "partitioning.sizes[1]") and whether it
// is a list's item, until visit returns false.
func eachValue(doc *yaml.Node, visit func(path string, v *yaml.Node, inList bool) bool) {
	var walk func(n *yaml.Node, path string) bool
	walk = func(n *yaml.Node, path string) bool {
		switch n.Kind {
		case yaml.DocumentNode:
			for _, c := range n.Content {
				if !walk(c, path) {
					return false
				}
			}
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				p := n.Content[i].Value
				if path != "" {
					p = path + "." + p
				}
				if !visit(p, n.Content[i+1], false) || !walk(n.Content[i+1], p) {
					return false
				}
			}
		case yaml.SequenceNode:
			for i, c := range n.Content {
				p := fmt.Sprintf("%s[%d]", path, i)
				if !visit(p, c, true) || !walk(c, p) {
					return false
				}
			}
		}
		return true
	}
	if doc != nil {
		walk(doc, "")
	}
}
