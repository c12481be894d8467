package repository

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestDidYouMean(t *testing.T) {
	root, other := t.TempDir(), t.TempDir()
	for _, d := range []string{"lenet5", "resnet18", ".lenet"} {
		require.NoError(t, os.Mkdir(filepath.Join(root, d), 0o755))
	}
	require.NoError(t, os.Mkdir(filepath.Join(other, "resnet50"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "vgg19"), nil, 0o644))
	both := Roots{root, other}
	for _, tc := range []struct {
		roots      Roots
		name, want string
	}{
		{both, "lenet", " (did you mean lenet5?)"}, // the hidden .lenet, one edit away, is no model
		{both, "resnet19", ""},                     // one edit from resnet18, two from resnet50 (of the other repository): no guess between two
		{Roots{root}, "resnet19", " (did you mean resnet18?)"},
		{both, "resnet", ""}, // both begin so
		{both, "vgg", ""},    // a file, not a model folder
		{Roots{filepath.Join(root, "none"), other}, "resnet5", " (did you mean resnet50?)"},
		{Roots{filepath.Join(root, "none")}, "lenet", ""},
	} {
		require.Equal(t, tc.want, tc.roots.DidYouMean(tc.name), tc.name)
	}
}
