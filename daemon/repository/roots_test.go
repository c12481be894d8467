package repository

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// lenetNamed is a Triton lenet folder named name, with its model file.
func lenetNamed(name string) entry {
	return pbtxtEntry(strings.Replace(tritonLenet, `"bad"`, `"`+name+`"`, 1), map[string]string{"1/model.onnx": "onnx"})
}

func TestModelsOfSeveralRepositories(t *testing.T) {
	opts := Options{Read: fakeReader, DefaultSLO: 100 * time.Millisecond}
	a := writeRepo(t, map[string]entry{"lenet": lenetNamed("lenet"), "shared": lenetNamed("shared"), "prep": pbtxtEntry(prepEnsemble, nil)})
	b := writeRepo(t, map[string]entry{"mnist": lenetNamed("mnist"), "shared": lenetNamed("shared"), "scene": pbtxtEntry(sceneEnsemble, nil)})
	roots := Roots{a, b}

	ix, err := Scan(roots, opts)
	require.NoError(t, err)
	require.Equal(t, []string{"lenet", "mnist", "prep", "scene"}, ix.Names())
	for name, root := range map[string]string{"lenet": a, "mnist": b, "prep": a, "scene": b} {
		m, err := ix.Get(name)
		require.NoError(t, err)
		require.Equal(t, filepath.Join(root, name), m.Dir, "%s is read from the repository that holds it", name)
	}
	scene, _ := ix.Get("scene")
	require.Equal(t, []string{"prep"}, scene.Config.Ensemble.Inlined, "a pipeline runs a pipeline of another repository in its step's place")

	// A name two repositories hold is served from neither, saying which.
	require.Len(t, ix.Broken, 1)
	require.ErrorIs(t, ix.Broken["shared"], ErrInvalidModel)
	require.ErrorIs(t, ix.Broken["shared"], ErrInSeveralRepositories)
	require.ErrorContains(t, ix.Broken["shared"], filepath.Join(a, "shared")+" and "+filepath.Join(b, "shared"))
	_, err = LoadVersions(roots, "shared", opts)
	require.ErrorIs(t, err, ErrInSeveralRepositories)
	_, err = Load(roots, "absent", opts)
	require.ErrorIs(t, err, ErrNotFound)
	require.ErrorContains(t, err, a+" and "+b)

	// Taken out of one, it serves from the other.
	require.NoError(t, os.RemoveAll(filepath.Join(a, "shared")))
	m, err := Load(roots, "shared", opts)
	require.NoError(t, err)
	require.Equal(t, filepath.Join(b, "shared"), m.Dir)

	// A link that leads nowhere in one repository leaves the name unserved
	// even where another holds it: which folder was meant is not known.
	require.NoError(t, os.Symlink(filepath.Join(t.TempDir(), "gone"), filepath.Join(a, "mnist")))
	ix, err = Scan(roots, opts)
	require.NoError(t, err)
	require.ErrorContains(t, ix.Broken["mnist"], "which does not exist")
	require.NotContains(t, ix.Models, "mnist")

	// A repository that cannot be read fails the scan, naming it.
	gone := filepath.Join(t.TempDir(), "absent")
	_, err = Scan(Roots{a, gone}, opts)
	require.ErrorContains(t, err, "read model repository "+gone)
}
