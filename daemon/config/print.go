package config

import (
	"bytes"
	"fmt"

	"gopkg.in/yaml.v3"
)

// YAML renders the effective configuration as YAML with a comment after every
// field saying where its value came from (default, file PATH, env VAR). The
// admin token, and the values auth.restricted_apis asks for, are shown as
// <redacted>.
func (l *Loaded) YAML() ([]byte, error) {
	var doc yaml.Node
	if err := doc.Encode(l.Config); err != nil {
		return nil, fmt.Errorf("encode config: %w", err)
	}
	markPresentNodes(&doc, "", func(path string, key, val *yaml.Node) {
		src, ok := l.Sources[path]
		if !ok {
			return // a section: its fields carry the comments
		}
		c := "# " + src.String()
		if path == "auth.admin_token" && val.Value != "" {
			val.Value, val.Style = "<redacted>", 0
		}
		if path == "auth.restricted_apis" {
			for _, e := range val.Content {
				e.Value, e.Style = RedactRestriction(e.Value), 0
			}
		}
		switch {
		case val.Kind == yaml.SequenceNode && allScalars(val):
			val.Style = yaml.FlowStyle
			val.LineComment = c
		case val.Kind == yaml.ScalarNode || len(val.Content) == 0:
			val.LineComment = c
		default:
			key.LineComment = c
		}
	})
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return nil, fmt.Errorf("encode config: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("encode config: %w", err)
	}
	return buf.Bytes(), nil
}

func markPresentNodes(n *yaml.Node, prefix string, visit func(path string, key, val *yaml.Node)) {
	if n.Kind != yaml.MappingNode {
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		p := n.Content[i].Value
		if prefix != "" {
			p = prefix + "." + p
		}
		visit(p, n.Content[i], n.Content[i+1])
		markPresentNodes(n.Content[i+1], p, visit)
	}
}

func allScalars(n *yaml.Node) bool {
	for _, c := range n.Content {
		if c.Kind != yaml.ScalarNode {
			return false
		}
	}
	return true
}
