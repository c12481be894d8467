package configerr

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// ValueError is a value an UnmarshalYAML method refused, with the line of
// its node, so that CleanIn can say where it is and under which key.
type ValueError struct {
	Line int
	Err  error
	// value is the node's text (a scalar's); container says it is a list
	// or a mapping.
	value     string
	container bool
}

func (e *ValueError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }

// Unwrap returns the refusal.
func (e *ValueError) Unwrap() error { return e.Err }

// AtNode is err, a refusal of n's value, with n's line.
func AtNode(n *yaml.Node, err error) error {
	return &ValueError{Line: n.Line, Err: err, value: n.Value, container: n.Kind != yaml.ScalarNode}
}

// lineMessage matches a message that starts with its line in the file.
var lineMessage = regexp.MustCompile(`^line (\d+): `)

// mismatch matches yaml.v3's message for a value of the wrong type.
var mismatch = regexp.MustCompile("cannot unmarshal !!(\\w+) (?:`([^`]*)` )?into (\\S+)")

// CleanIn is Clean for the document doc (nil: none at hand): a message at
// a line where doc has a key's value also names the key ("line 2:
// limits.max_connections: "lots" is not a whole number"), and yaml.v3's
// type mismatches say what the key takes rather than Go's type.
func CleanIn(err error, known map[string]Section, doc *yaml.Node) string {
	if ve, ok := errors.AsType[*ValueError](err); ok {
		if key := keyAt(doc, ve.Line, ve.value, ve.container); key != "" {
			return fmt.Sprintf("line %d: %s: %v", ve.Line, key, ve.Err)
		}
		return ve.Error()
	}
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
	if key := keyAt(doc, line, value, container); key != "" {
		return at[0] + key + ": " + rest
	}
	return at[0] + rest
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
	var walk func(n *yaml.Node, path string)
	walk = func(n *yaml.Node, path string) {
		switch n.Kind {
		case yaml.DocumentNode:
			for _, c := range n.Content {
				walk(c, path)
			}
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				p := k.Value
				if path != "" {
					p = path + "." + k.Value
				}
				if v.Line == line && (!container || v.Kind != yaml.ScalarNode) {
					found = p
					if value != "" && v.Kind == yaml.ScalarNode && v.Value == value {
						exact = p
					}
				}
				walk(v, p)
			}
		case yaml.SequenceNode:
			for i, c := range n.Content {
				p := fmt.Sprintf("%s[%d]", path, i)
				if c.Line == line && c.Kind == yaml.ScalarNode && !container {
					found = p
					if value != "" && c.Value == value {
						exact = p
					}
				}
				walk(c, p)
			}
		}
	}
	if doc != nil {
		walk(doc, "")
	}
	if exact != "" {
		return exact
	}
	return found
}
