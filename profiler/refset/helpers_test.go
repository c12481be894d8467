package refset

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// sharedData is the original reference data, present in the development
// tree but not needed by the package.
const sharedData = "../../../shared/data"

func readFixture(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	return string(b)
}

// lines splits a fixture into lines without their newlines.
func lines(s string) []string { return strings.Split(strings.TrimRight(s, "\n"), "\n") }

func joinLines(ls []string) string { return strings.Join(ls, "\n") + "\n" }

// withLine returns the fixture with line n (1-based) replaced.
func withLine(s string, n int, repl string) string {
	ls := lines(s)
	ls[n-1] = repl
	return joinLines(ls)
}

func encode(t testing.TB, src *Source) string {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, src.Encode(&buf))
	return buf.String()
}

func loadSet(t testing.TB, name string) *Set {
	t.Helper()
	s, err := Load(name)
	require.NoError(t, err)
	return s
}
