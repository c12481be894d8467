// Package repository reads gpuletd's model repository: one folder per model
// holding config.yaml and numbered version folders with the model file
// (<repo>/<model>/config.yaml, <repo>/<model>/<version>/model.onnx). It
// validates each entry, reads inputs and outputs from the model file and
// hashes it. A broken entry is reported with its file and problem and does
// not hide the others.
package repository

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
)

// ErrNotFound is returned for a model the repository does not hold.
var ErrNotFound = errors.New("model not found")

// ErrInvalidModel wraps every problem with a repository entry.
var ErrInvalidModel = errors.New("invalid model")

// Model is one servable entry: the newest version of a model folder.
type Model struct {
	Name     string
	Version  int
	Dir      string // the model's folder
	File     string // the model file of that version
	Platform string
	SHA256   string // hex sha256 of File
	Bytes    int64  // size of File
	Config   ModelConfig
	// Inputs and Outputs are per request (no batch dimension when the model batches).
	Inputs  []TensorSpec
	Outputs []TensorSpec
}

// Profile is the name of the model's curve in a reference profile set.
func (m *Model) Profile() string {
	if m.Config.Profile != "" {
		return m.Config.Profile
	}
	return m.Name
}

// InfoReader reads the inputs and outputs of a model file, with full shapes
// (dimension 0 included; -1 where a dimension is dynamic).
type InfoReader func(path string) (inputs, outputs []TensorSpec, err error)

// Index is the result of a scan: the models that are fine and one error per
// entry that is not.
type Index struct {
	Root     string
	Models   map[string]*Model
	Problems []error
	// Broken maps the folder name of each entry in Problems to its error.
	Broken map[string]error
}

// Names returns the servable model names, sorted.
func (ix *Index) Names() []string {
	out := make([]string, 0, len(ix.Models))
	for n := range ix.Models {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Get returns a model by name, or an error wrapping ErrNotFound.
func (ix *Index) Get(name string) (*Model, error) {
	m, ok := ix.Models[name]
	if !ok {
		return nil, fmt.Errorf("get model %q: %w", name, ErrNotFound)
	}
	return m, nil
}

var validName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$`)

// Scan reads every model folder under root. It fails only when root itself
// cannot be read; a broken entry goes to Index.Problems.
func Scan(root string, read InfoReader) (*Index, error) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, fmt.Errorf("read model repository %s: %w", root, err)
	}
	ix := &Index{Root: root, Models: map[string]*Model{}, Broken: map[string]error{}}
	for _, e := range entries {
		if !e.IsDir() || e.Name()[0] == '.' {
			continue
		}
		m, err := Load(root, e.Name(), read)
		if err != nil {
			ix.Problems = append(ix.Problems, err)
			ix.Broken[e.Name()] = err
			continue
		}
		ix.Models[m.Name] = m
	}
	return ix, nil
}

// Load reads one model folder: its config.yaml and its newest version.
func Load(root, name string, read InfoReader) (*Model, error) {
	dir := filepath.Join(root, name)
	fail := func(file string, err error) (*Model, error) {
		return nil, fmt.Errorf("%w: %s: %w", ErrInvalidModel, file, err)
	}
	if !validName.MatchString(name) {
		return fail(dir, fmt.Errorf("model name %q is not allowed; use letters, digits, '.', '_' and '-'", name))
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("load model %q from %s: %w", name, root, ErrNotFound)
	}
	cfgPath := filepath.Join(dir, "config.yaml")
	data, err := os.ReadFile(cfgPath)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return fail(cfgPath, errors.New("missing; every model folder needs a config.yaml with at least slo and max_batch_size"))
		}
		return fail(cfgPath, err)
	}
	cfg, err := ParseModelConfig(data)
	if err != nil {
		return fail(cfgPath, err)
	}
	version, vdir, err := newestVersion(dir)
	if err != nil {
		return fail(dir, err)
	}
	platform, file, err := modelFile(vdir, cfg.Platform)
	if err != nil {
		return fail(vdir, err)
	}
	m := &Model{Name: name, Version: version, Dir: dir, File: file, Platform: platform, Config: cfg}
	if m.SHA256, m.Bytes, err = hashFile(file); err != nil {
		return fail(file, err)
	}
	if err := m.resolveTensors(read); err != nil {
		return fail(file, err)
	}
	return m, nil
}

// newestVersion finds the highest numbered version folder.
func newestVersion(dir string) (int, string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0, "", err
	}
	best := -1
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		v, err := strconv.Atoi(e.Name())
		if err != nil || v < 1 || strconv.Itoa(v) != e.Name() {
			continue
		}
		best = max(best, v)
	}
	if best < 1 {
		return 0, "", errors.New("no version folder; put the model file in <model>/1/model.onnx")
	}
	return best, filepath.Join(dir, strconv.Itoa(best)), nil
}

// modelFile finds the model file of a version folder for the configured
// platform, or infers the platform from the file present.
func modelFile(vdir, platform string) (string, string, error) {
	if platform != "" {
		f := filepath.Join(vdir, modelFiles[platform])
		if _, err := os.Stat(f); err != nil {
			return "", "", fmt.Errorf("no %s for platform %s", modelFiles[platform], platform)
		}
		return platform, f, nil
	}
	for _, p := range []string{PlatformONNX, PlatformTorchScript} {
		f := filepath.Join(vdir, modelFiles[p])
		if _, err := os.Stat(f); err == nil {
			return p, f, nil
		}
	}
	return "", "", errors.New("no model file; expected model.onnx or model.pt")
}

func hashFile(path string) (string, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return "", 0, fmt.Errorf("hash model file: %w", err)
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}
