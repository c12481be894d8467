package config

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/gpulet/gpuletd/internal/configerr"
	"gopkg.in/yaml.v3"
)

// field is one settable configuration value: its dotted YAML path, its
// environment variable and where it lives in a Config.
type field struct {
	path  string
	env   string
	index []int
}

// leafTypes are struct types that are one value, not a section.
var leafTypes = map[reflect.Type]bool{
	reflect.TypeFor[Devices](): true,
}

// fieldPaths lists every settable field of Config in declaration order.
func fieldPaths() []field {
	var out []field
	var walk func(t reflect.Type, prefix string, index []int)
	walk = func(t reflect.Type, prefix string, index []int) {
		for i := range t.NumField() {
			sf := t.Field(i)
			name := configerr.Key(sf)
			if name == "" {
				continue
			}
			p := name
			if prefix != "" {
				p = prefix + "." + name
			}
			idx := append(append([]int(nil), index...), i)
			if sf.Type.Kind() == reflect.Struct && !leafTypes[sf.Type] {
				walk(sf.Type, p, idx)
				continue
			}
			out = append(out, field{
				path:  p,
				env:   EnvPrefix + strings.ToUpper(strings.ReplaceAll(p, ".", "_")),
				index: idx,
			})
		}
	}
	walk(reflect.TypeFor[Config](), "", nil)
	return out
}

// set parses an environment value into the field. The value is read as YAML
// of the field's type, so lists and device entries may be given as YAML flow
// ("[{kind: cpu}]"); a list of numbers may also be written "20,40,60".
func (f field) set(c *Config, value string) error {
	v := reflect.ValueOf(c).Elem().FieldByIndex(f.index)
	if v.Kind() == reflect.Slice && !strings.HasPrefix(strings.TrimSpace(value), "[") {
		value = "[" + value + "]"
	}
	if v.Kind() == reflect.String {
		v.SetString(value) // taken as is: no YAML quoting rules for plain strings
		return nil
	}
	ptr := reflect.New(v.Type())
	var node yaml.Node
	if err := yaml.Unmarshal([]byte(value), &node); err != nil {
		return fmt.Errorf("parse %s: %s", f.path, cleanYAMLError(err))
	}
	if len(node.Content) == 0 {
		return fmt.Errorf("parse %s: empty value", f.path)
	}
	if err := decodeStrict(node.Content[0], ptr.Interface()); err != nil {
		// One value: its line says nothing; a list's entry is named by
		// its index.
		msg := configerr.CleanIn(err, sections(), &node)
		msg = strings.TrimPrefix(msg, "line 1: ")
		if strings.HasPrefix(msg, "[") {
			return fmt.Errorf("%s%s", f.path, msg) // partitioning.sizes[1]: …
		}
		return fmt.Errorf("%s: %s", f.path, msg)
	}
	v.Set(ptr.Elem())
	return nil
}
