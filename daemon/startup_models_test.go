package daemon

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/daemon/config"
	"github.com/gpulet/gpuletd/daemon/repository"
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
