package daemon

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The admin page hears an event only if it listens for its kind (the
// stream names each event by its kind): its list must hold every kind the
// daemon writes. It lacked devices, store and slo_unreachable, so a full
// disk, the GPU engine falling back to the CPU and an SLO no batch meets
// never showed on the page.
func TestThePageListensForEveryEventKind(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "events.go", nil, 0)
	require.NoError(t, err)
	var kinds []string
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.CONST {
			continue
		}
		for _, spec := range gd.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, name := range vs.Names {
				if !strings.HasPrefix(name.Name, "Event") || i >= len(vs.Values) {
					continue
				}
				lit, ok := vs.Values[i].(*ast.BasicLit)
				require.True(t, ok && lit.Kind == token.STRING, "%s is a string literal", name.Name)
				v, err := strconv.Unquote(lit.Value)
				require.NoError(t, err)
				kinds = append(kinds, v)
			}
		}
	}
	require.Contains(t, kinds, EventStore, "the event kinds are read from events.go")
	require.ElementsMatch(t, kinds, knownEventKinds, "knownEventKinds, which filters are checked against, lists every kind")

	js, err := os.ReadFile("../web/assets/events.js")
	require.NoError(t, err)
	block := regexp.MustCompile(`(?s)const KINDS = \[(.*?)\];`).FindSubmatch(js)
	require.NotNil(t, block, "events.js declares const KINDS = [...]")
	var listened []string
	for _, m := range regexp.MustCompile(`'([a-z_]+)'`).FindAllSubmatch(block[1], -1) {
		listened = append(listened, string(m[1]))
	}
	slices.Sort(kinds)
	slices.Sort(listened)
	require.Equal(t, kinds, listened)
}
