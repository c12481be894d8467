package config

import (
	"reflect"
	"regexp"
	"strings"
)

// unknownFieldMessage matches yaml.v3's message for a key no field takes,
// before cleanYAMLError rewords it.
var unknownFieldMessage = regexp.MustCompile(`field (\S+) not found in type config\.(\w+)`)

// section is one struct type of the configuration as an operator reads it.
type section struct {
	where string            // "at the top level", "in scheduler", "in a devices entry"
	keys  map[string]string // its YAML keys, each with its dotted path ("scheduler.policy")
}

// sections lists the configuration's struct types by their Go type name, as
// yaml.v3 names them in errors (Config, Scheduler, DeviceEntry…).
func sections() map[string]section {
	out := map[string]section{}
	var walk func(t reflect.Type, prefix string)
	walk = func(t reflect.Type, prefix string) {
		if _, seen := out[t.Name()]; seen {
			return
		}
		names := map[string]string{}
		where := "in " + prefix
		switch {
		case prefix == "":
			where = "at the top level"
		case strings.HasSuffix(prefix, "[]"):
			where = "in a " + strings.TrimSuffix(prefix, "[]") + " entry"
		}
		out[t.Name()] = section{where: where, keys: names}
		for i := range t.NumField() {
			sf := t.Field(i)
			name, _, _ := strings.Cut(sf.Tag.Get("yaml"), ",")
			if name == "" || name == "-" {
				continue
			}
			p := name
			if prefix != "" {
				p = prefix + "." + name
			}
			names[name] = p
			if strings.HasSuffix(prefix, "[]") {
				names[name] = name // beside its entry's other keys
			}
			switch ft := sf.Type; {
			case ft == reflect.TypeFor[Devices]():
				walk(reflect.TypeFor[DeviceEntry](), p+"[]")
			case ft.Kind() == reflect.Struct:
				walk(ft, p)
			}
		}
	}
	walk(reflect.TypeFor[Config](), "")
	return out
}

// didYouMean returns " (did you mean X?)" when exactly one of the known
// names is a likely misspelling of name (one edit away, two for names of
// six letters or more), else "".
func didYouMean(name string, known map[string]string) string {
	limit := max(1, min(2, len(name)/3))
	var found string
	for k, shown := range known {
		if editDistance(name, k) > limit {
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

// editDistance is the optimal string alignment distance between a and b,
// by bytes (the configuration's names are ASCII): insertions, deletions,
// substitutions and swaps of two neighbours ("listne") each count one.
func editDistance(a, b string) int {
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
