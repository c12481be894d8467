package daemon

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/gpulet/gpuletd/daemon/config"
	"github.com/gpulet/gpuletd/daemon/repository"
	"github.com/gpulet/gpuletd/profiler/store"
)

// TestSelectStartup: startup_models picks folders by name; a pipeline
// brings its steps and their variants; "*" picks all; a name the
// repository has no folder of is reported, a broken folder's name is not.
func TestSelectStartup(t *testing.T) {
	model := func(name, family string) *repository.Model {
		return &repository.Model{Name: name, Family: family}
	}
	lite := model("labeler-lite", "labeler-lite")
	lite.Config.VariantOf = "labeler"
	pipe := model("spot-and-label", "spot-and-label")
	pipe.Config.Ensemble = &repository.Ensemble{Steps: []repository.EnsembleStep{{Model: "spotter"}, {Model: "labeler", Version: 2}}}
	ix := &repository.Index{
		Models: map[string]*repository.Model{
			"resnet": model("resnet", "resnet"), "resnet:2": model("resnet:2", "resnet"),
			"lenet5": model("lenet5", "lenet5"), "spotter": model("spotter", "spotter"),
			"labeler": model("labeler", "labeler"), "labeler-lite": lite, "spot-and-label": pipe,
		},
		Broken: map[string]error{"corrupt": errors.New("truncated")},
	}
	everyone := []string{"corrupt", "labeler", "labeler-lite", "lenet5", "resnet", "spot-and-label", "spotter"}
	for _, tc := range []struct {
		name      string
		names     []string
		serves    []string
		notLoaded []string
		unknown   []string
	}{
		{"all", []string{config.StartupAll}, everyone, nil, nil},
		{"all among names", []string{"lenet5", config.StartupAll}, everyone, nil, nil},
		{"none", []string{}, nil, everyone, nil},
		{"one folder, every version", []string{"resnet"}, []string{"resnet"},
			[]string{"corrupt", "labeler", "labeler-lite", "lenet5", "spot-and-label", "spotter"}, nil},
		{"a pipeline brings its steps and their variants", []string{"spot-and-label"},
			[]string{"labeler", "labeler-lite", "spot-and-label", "spotter"}, []string{"corrupt", "lenet5", "resnet"}, nil},
		{"a typo and a broken folder", []string{"lenet", "corrupt", "lenet"}, []string{"corrupt"},
			[]string{"labeler", "labeler-lite", "lenet5", "resnet", "spot-and-label", "spotter"}, []string{"lenet"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sel := selectStartup(ix, tc.names)
			var serves []string
			for _, f := range everyone {
				if sel.serves(f) {
					serves = append(serves, f)
				}
			}
			require.Equal(t, tc.serves, serves)
			require.Equal(t, tc.notLoaded, sel.notLoaded(ix))
			require.Equal(t, tc.unknown, sel.unknown)
		})
	}
}

// A model_config_name that no folder has a custom configuration of is a
// warning event at start (a misspelt name changes nothing otherwise); one
// that picks some is not.
func TestAConfigNameNoFolderHasIsWarned(t *testing.T) {
	root := t.TempDir()
	for _, f := range []string{"m/1/model.onnx", "m/configs/h100.pbtxt"} {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(root, f)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, f), []byte(`platform: "onnxruntime_onnx" max_batch_size: 4`), 0o644))
	}
	for name, warned := range map[string]bool{"h100": false, "H100": true} {
		st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "g.db"))
		require.NoError(t, err)
		t.Cleanup(func() { _ = st.Close() })
		opts := testRepositoryOptions(time.Second)
		opts.Read, opts.ConfigName = fixedReader, name
		n := &node{log: zap.NewNop(), events: newEvents(st, zap.NewNop())}
		n.catalog = newCatalog([]string{root}, opts, st, n.events, zap.NewNop())
		sel, err := n.catalog.scan(context.Background(), []string{config.StartupAll})
		require.NoError(t, err)
		n.noteStartup(sel)
		events, err := st.Events(context.Background(), 0, 0)
		require.NoError(t, err)
		var warnings []string
		for _, e := range events {
			if e.Severity == store.SeverityWarning {
				warnings = append(warnings, e.Message)
			}
		}
		if !warned {
			require.Empty(t, warnings, name)
			continue
		}
		require.Equal(t, []string{"model_config_name H100: no model folder serves with a configs/H100.pbtxt (the folders' configs hold h100.pbtxt); each serves with its config.pbtxt"}, warnings)
	}
}
