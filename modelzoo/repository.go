package modelzoo

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/gpulet/gpuletd/internal/atomicfile"
)

// ErrRepositoryNotEmpty is returned by WriteRepository for a directory that
// already has entries, unless WithOverwrite is given.
var ErrRepositoryNotEmpty = errors.New("model repository directory is not empty")

// ModelVersion is the version directory WriteRepository puts each model in.
const ModelVersion = "1"

// WriteOption changes what WriteRepository does.
type WriteOption func(*writeOptions)

type writeOptions struct {
	overwrite bool
	triton    bool
	external  bool
}

// WithOverwrite lets WriteRepository write into a non-empty directory,
// replacing the config.yaml and model.onnx of the models it writes and
// leaving every other file alone.
func WithOverwrite() WriteOption {
	return func(o *writeOptions) { o.overwrite = true }
}

// AsTriton writes each model's configuration as Triton has it, a
// config.pbtxt without an SLO (ConfigPbtxt), instead of config.yaml.
func AsTriton() WriteOption {
	return func(o *writeOptions) { o.triton = true }
}

// WithExternalData keeps each model's weights in a file beside its
// model.onnx, ExternalDataFile, as exporters do for large models (ONNX's
// external data): the model file holds the graph and small tensors alone.
func WithExternalData() WriteOption {
	return func(o *writeOptions) { o.external = true }
}

// WriteRepository writes a model repository for models (DemoModels when
// empty; names from Names or FormModels) into dir: <dir>/<model>/config.yaml (config.pbtxt with AsTriton)
// and <dir>/<model>/1/model.onnx, with weights drawn from seed. Every file is
// written to a temporary name and renamed into place, so a reader never
// sees half a file. Unknown names are rejected before anything is written.
func WriteRepository(dir string, models []string, seed uint64, opts ...WriteOption) error {
	var o writeOptions
	for _, opt := range opts {
		opt(&o)
	}
	if len(models) == 0 {
		models = DemoModels()
	}
	entries := make([]repoEntry, len(models))
	for i, name := range models {
		e, err := entryFor(name)
		if err != nil {
			return fmt.Errorf("write repository %s: %w", dir, err)
		}
		entries[i] = e
	}
	if !o.overwrite {
		empty, err := isEmptyDir(dir)
		if err != nil {
			return fmt.Errorf("write repository %s: %w", dir, err)
		}
		if !empty {
			return fmt.Errorf("write repository %s: %w (pass overwrite to write into it)", dir, ErrRepositoryNotEmpty)
		}
	}
	for _, e := range entries {
		if err := writeModel(dir, e, seed, o); err != nil {
			return fmt.Errorf("write repository %s: %w", dir, err)
		}
	}
	return nil
}

// repoEntry is what WriteRepository writes for one model.
type repoEntry struct {
	name  string
	yaml  func(seed uint64) string // nil: the model has a config.pbtxt alone
	pbtxt func(seed uint64) string
}

func entryFor(name string) (repoEntry, error) {
	if f, ok := lookupForm(name); ok {
		e := repoEntry{name: name, yaml: f.configYAML, pbtxt: f.configPbtxt}
		if f.pbtxtOnly() {
			e.yaml = nil
		}
		return e, nil
	}
	m, err := Lookup(name)
	if err != nil {
		return repoEntry{}, fmt.Errorf("%w; or one of %v", err, FormModels())
	}
	return repoEntry{
		name:  name,
		yaml:  func(seed uint64) string { return ConfigYAML(m, seed) },
		pbtxt: func(seed uint64) string { return ConfigPbtxt(m, seed) },
	}, nil
}

func writeModel(dir string, e repoEntry, seed uint64, o writeOptions) error {
	m, err := Build(e.name, seed)
	if err != nil {
		return err
	}
	versionDir := filepath.Join(dir, e.name, ModelVersion)
	if err := os.MkdirAll(versionDir, 0o755); err != nil {
		return fmt.Errorf("create model directory: %w", err)
	}
	if o.external {
		// The weights first: a reader never finds a model file whose
		// weights are not there yet.
		data := SplitExternalData(m, ExternalDataFile)
		if err := atomicfile.Write(filepath.Join(versionDir, ExternalDataFile), data, 0o644); err != nil {
			return err
		}
	}
	b, err := Marshal(m)
	if err != nil {
		return err
	}
	if err := atomicfile.Write(filepath.Join(versionDir, "model.onnx"), b, 0o644); err != nil {
		return err
	}
	if o.triton || e.yaml == nil {
		return atomicfile.Write(filepath.Join(dir, e.name, "config.pbtxt"), []byte(e.pbtxt(seed)), 0o644)
	}
	return atomicfile.Write(filepath.Join(dir, e.name, "config.yaml"), []byte(e.yaml(seed)), 0o644)
}

// isEmptyDir reports whether dir is missing or has no entries.
func isEmptyDir(dir string) (bool, error) {
	f, err := os.Open(dir)
	if errors.Is(err, os.ErrNotExist) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("open directory: %w", err)
	}
	defer func() { _ = f.Close() }()
	if _, err := f.Readdirnames(1); errors.Is(err, io.EOF) {
		return true, nil
	} else if err != nil {
		return false, fmt.Errorf("read directory: %w", err)
	}
	return false, nil
}
