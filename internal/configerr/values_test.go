package configerr

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

// refusing is a value type whose UnmarshalYAML refuses what is not a
// duration, as the configuration's durations refuse "20".
type refusing struct{}

func (*refusing) UnmarshalYAML(n *yaml.Node) error {
	if _, err := time.ParseDuration(n.Value); err != nil {
		return AtNode(n, errors.New(`"`+n.Value+`" is not a duration`))
	}
	return nil
}

type valued struct {
	Listen    string     `yaml:"listen"`
	Scheduler sched      `yaml:"scheduler"`
	Inputs    []entry    `yaml:"inputs"`
	Sizes     []int      `yaml:"sizes"`
	Ratio     float64    `yaml:"ratio"`
	Strict    bool       `yaml:"strict"`
	Period    *refusing  `yaml:"period"`
	Periods   []refusing `yaml:"periods"`
	Workers   uint       `yaml:"workers"`
}

// A value of the wrong type, or one an UnmarshalYAML refused, is named by
// its key's path and said in words, not Go's types.
func TestCleanInNamesTheKey(t *testing.T) {
	known := Sections(reflect.TypeFor[valued](), nil)
	for _, tc := range []struct{ name, text, want string }{
		{"a number", "listen: x\ninputs:\n  - name: a\n    count: lots\n", `line 4: inputs[0].count: "lots" is not a whole number`},
		{"one item of a list on one line", "sizes: [20, forty, 60]\n", `line 1: sizes[1]: "forty" is not a whole number`},
		{"a list for a string", "listen: [a, b]\n", `line 1: listen: want a string, not a list`},
		{"a list for a section", "scheduler: [1]\n", `line 1: scheduler: want a mapping (key: value), not a list`},
		{"a list in a section", "scheduler:\n  policy: [a]\n", `line 2: scheduler.policy: want a string, not a list`},
		{"a mapping for a number", "ratio:\n  a: 1\n", `line 2: ratio: want a number, not a mapping`},
		{"a flag", "strict: sure\n", `line 1: strict: "sure" is not true or false`},
		{"unsigned", "workers: -1\n", `line 1: workers: "-1" is not a whole number, 0 or more`},
		{"two of them", "strict: sure\nratio: much\n", `line 1: strict: "sure" is not true or false; line 2: ratio: "much" is not a number`},
		{"refused by its UnmarshalYAML", "listen: x\nperiod: 20\n", `line 2: period: "20" is not a duration`},
		{"refused values and others, all of them", "period: 20\nstrict: sure\nworkers: x\n", `line 1: period: "20" is not a duration; line 2: strict: "sure" is not true or false; line 3: workers: "x" is not a whole number, 0 or more`},
		{"refused in a list on one line, by column", "periods: [5s, 20, 7s, x]\n", `line 1: periods[1]: "20" is not a duration; line 1: periods[3]: "x" is not a duration`},
		{"refused as a section", "scheduler:\n  every: 20\n", `line 2: scheduler.every: "20" is not a duration`},
		{"an unknown key stays as Clean says it", "scheduler:\n  polcy: eager\n", `line 2: unknown field "polcy" in scheduler (did you mean scheduler.policy?)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var d valued
			dec := yaml.NewDecoder(strings.NewReader(tc.text))
			dec.KnownFields(true)
			err := dec.Decode(&d)
			require.Error(t, err)
			var n yaml.Node
			require.NoError(t, yaml.Unmarshal([]byte(tc.text), &n))
			require.Equal(t, tc.want, CleanIn(err, known, &n))
		})
	}
	require.Equal(t, `line 1: "much" is not a number`, CleanIn(&yaml.TypeError{Errors: []string{"line 1: cannot unmarshal !!str `much` into float64"}}, nil, nil),
		"with no document, the words alone")
}
