package pipeline

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// ErrUnknownPipeline is returned for a builtin name Builtin does not know.
var ErrUnknownPipeline = errors.New("unknown pipeline")

// builtins are the pipelines gpuletd knows by name.
var builtins = map[string]func(ProfileFunc) (*Pipeline, error){
	"traffic-analysis": TrafficAnalysis,
}

// Builtins lists the names Builtin knows, sorted.
func Builtins() []string {
	out := make([]string, 0, len(builtins))
	for name := range builtins {
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

// Builtin builds the pipeline of that name with its variants' batch times
// from profile.
func Builtin(name string, profile ProfileFunc) (*Pipeline, error) {
	build, ok := builtins[name]
	if !ok {
		return nil, fmt.Errorf("build pipeline %q: %w (known: %s)", name, ErrUnknownPipeline, strings.Join(Builtins(), ", "))
	}
	return build(profile)
}
