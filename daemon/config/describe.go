package config

import (
	"fmt"
	"reflect"
	"strings"

	"gopkg.in/yaml.v3"
)

// Setting is one field of the configuration as a command's help names it.
type Setting struct {
	Path    string // dotted YAML path, log.level
	Env     string // the environment variable that sets it, GPULETD_LOG_LEVEL
	Default string // the built-in default, as YAML writes it
}

// Describe gives the settings at the dotted paths, in their order; a path
// the configuration does not have is an error.
func Describe(paths ...string) ([]Setting, error) {
	fields := map[string]field{}
	for _, f := range fieldPaths() {
		fields[f.path] = f
	}
	def := reflect.ValueOf(Default())
	out := make([]Setting, 0, len(paths))
	for _, p := range paths {
		f, ok := fields[p]
		if !ok {
			return nil, fmt.Errorf("describe setting %q: the configuration has no such field", p)
		}
		b, err := yaml.Marshal(def.FieldByIndex(f.index).Interface())
		if err != nil {
			return nil, fmt.Errorf("describe setting %q: %w", p, err)
		}
		out = append(out, Setting{Path: p, Env: f.env, Default: strings.TrimSpace(string(b))})
	}
	return out, nil
}
