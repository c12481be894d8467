package configerr

import (
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

type entry struct {
	Name  string `yaml:"name"`
	Count int    `yaml:"count"`
}

type list []entry

type sched struct {
	Policy    string   `yaml:"policy"`
	Algorithm string   `yaml:"algorithm"`
	Every     refusing `yaml:"every"`
}

type doc struct {
	Listen    string  `yaml:"listen"`
	Scheduler sched   `yaml:"scheduler"`
	Inputs    []entry `yaml:"inputs"`
	Hidden    string  `yaml:"-"`
	Others    *list   `yaml:"others"`
}

func decode(t *testing.T, text string) error {
	t.Helper()
	var d doc
	dec := yaml.NewDecoder(strings.NewReader(text))
	dec.KnownFields(true)
	err := dec.Decode(&d)
	require.Error(t, err)
	return err
}

func TestCleanSaysWhereAndGuesses(t *testing.T) {
	known := Sections(reflect.TypeFor[doc](), nil)
	tests := []struct{ name, text, want string }{
		{"top level", "listne: x\n", `line 1: unknown field "listne" at the top level (did you mean listen?)`},
		{"section", "scheduler:\n  polcy: eager\n", `line 2: unknown field "polcy" in scheduler (did you mean scheduler.policy?)`},
		{"list entry", "inputs:\n  - name: a\n    cont: 2\n", `line 3: unknown field "cont" in an inputs entry (did you mean count?)`},
		{"nothing like it", "scheduler:\n  speed: 3\n", `line 2: unknown field "speed" in scheduler`},
		{"two problems", "listne: x\nhidden: y\n", `line 1: unknown field "listne" at the top level (did you mean listen?); line 2: unknown field "hidden" at the top level`},
		{"a wrong type", "scheduler: [1]\n", "line 1: want a mapping (key: value), not a list"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, Clean(decode(t, tt.text), known))
		})
	}
	require.Equal(t, "did not find expected node content", Clean(decode(t, "listen: [\n"), known)[len("line 2: "):])
}

func TestSectionsReadListsAsEntries(t *testing.T) {
	known := Sections(reflect.TypeFor[doc](), map[reflect.Type]reflect.Type{reflect.TypeFor[*list](): reflect.TypeFor[entry]()})
	require.Equal(t, "at the top level", known["doc"].Where)
	require.NotContains(t, known["doc"].Keys, "hidden")
	require.Equal(t, "scheduler.policy", known["sched"].Keys["policy"])
	require.Equal(t, "in an inputs entry", known["entry"].Where)
	require.Equal(t, "count", known["entry"].Keys["count"])
	require.NotContains(t, known, "list", "a type read as a list of entries is not a section of its own")
}

func TestDidYouMean(t *testing.T) {
	known := map[string]string{"policy": "scheduler.policy", "algorithm": "scheduler.algorithm", "ab": "x.ab", "ac": "x.ac"}
	tests := []struct{ name, want string }{
		{"polcy", " (did you mean scheduler.policy?)"},
		{"plicy", " (did you mean scheduler.policy?)"},
		{"algoritm", " (did you mean scheduler.algorithm?)"},
		{"speed", ""},
		{"a", ""}, // ab and ac are both one edit away: no guess
		{"algo", " (did you mean scheduler.algorithm?)"},
		{"policy_name", " (did you mean scheduler.policy?)"},
		{"pol", ""}, // too short to be taken for policy
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, DidYouMean(tt.name, known), tt.name)
	}
}

func TestEditDistance(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"kitten", "sitting", 3},
		{"listne", "listen", 1},
		{"", "", 0},
		{"", "abcd", 4},
		{"same", "same", 0},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, EditDistance(tt.a, tt.b), "%s/%s", tt.a, tt.b)
	}
}

func TestKey(t *testing.T) {
	type s struct {
		A string `yaml:"a,omitempty"`
		B string `yaml:"-"`
		C string
		D string `json:"d"`
	}
	typ := reflect.TypeFor[s]()
	for i, want := range []string{"a", "", "", ""} {
		require.Equal(t, want, Key(typ.Field(i)), typ.Field(i).Name)
	}
}
