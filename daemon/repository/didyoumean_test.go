package repository

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestDidYouMean(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"lenet5", "resnet18", "resnet50", ".lenet"} {
		require.NoError(t, os.Mkdir(filepath.Join(root, d), 0o755))
	}
	require.NoError(t, os.WriteFile(filepath.Join(root, "vgg19"), nil, 0o644))
	for _, tc := range []struct{ root, name, want string }{
		{root, "lenet", " (did you mean lenet5?)"}, // the hidden .lenet, one edit away, is no model
		{root, "resnet19", ""},                     // one edit from resnet18, two from resnet50: no guess between two
		{root, "resnet", ""},                       // both begin so
		{root, "vgg", ""},                          // a file, not a model folder
		{filepath.Join(root, "none"), "lenet", ""},
	} {
		require.Equal(t, tc.want, DidYouMean(tc.root, tc.name), tc.name)
	}
}
