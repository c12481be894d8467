// Package repository reads gpuletd's model repository: one folder per model
// holding its configuration and numbered version folders with the model file
// (<repo>/<model>/config.pbtxt as Triton has it, or gpuletd's config.yaml, and
// <repo>/<model>/<version>/model.onnx). It
// validates each entry, reads inputs and outputs from the model file and
// hashes it. A broken entry is reported with its file and problem and does
// not hide the others.
package repository

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gpulet/gpuletd/daemon/config"
	"github.com/gpulet/gpuletd/internal/fsperm"
)

// ErrNotFound is returned for a model the repository does not hold.
var ErrNotFound = errors.New("model not found")

// ErrInvalidModel wraps every problem with a repository entry.
var ErrInvalidModel = errors.New("invalid model")

// Model is one servable entry: one version of a model folder.
type Model struct {
	// Name is the servable's key: the folder's name for the newest version
	// the version policy selects, VersionKey(folder, version) for each older
	// one served beside it.
	Name string
	// Family is the folder's name, which the protocol answers with.
	Family   string
	Version  int
	Dir      string // the model's folder
	File     string // the model file of that version
	Platform string
	SHA256   string // Digest.SHA256 of File (and its external data), with foldRuntimeDigest's
	Bytes    int64  // size of File and its external data
	// ExternalData are the files beside File that an ONNX model keeps
	// tensors in (Digest.ExternalData).
	ExternalData []string
	// OpLibraries are the paths of the custom operator libraries of
	// Config.OpLibraries (in the model folder when not absolute).
	OpLibraries []string
	Config      ModelConfig
	// ConfigFiles names the configuration files read (config.pbtxt or a
	// custom configuration configs/<name>.pbtxt, config.yaml, or both).
	ConfigFiles []string
	// SLOSource says where Config.SLO came from: SLOFromYAML, SLOFromPbtxt
	// (a custom configuration's: "configs/<name>.pbtxt parameters") or
	// SLOFromDefault.
	SLOSource string
	// Notes say which configured fields took no effect and why.
	Notes []string
	// Inputs and Outputs are per request (no batch dimension when the model batches).
	Inputs  []TensorSpec
	Outputs []TensorSpec
	// Labels are the class labels of outputs with a label file
	// (Config.LabelFiles), by output and class index.
	Labels map[string][]string

	// autoBatch: the configuration leaves max_batch_size to the model file
	// (no file at all, or a config.pbtxt as tritonConfig.batchFromFile
	// says), which says whether the model batches (AutoMaxBatchSize).
	autoBatch bool
}

// AutoMaxBatchSize is the max_batch_size of a model whose configuration
// leaves it to the model file (autoBatch) and whose inputs and outputs all
// have a dynamic first dimension, unless Options.DefaultMaxBatchSize says
// another: Triton's default when it auto-completes a configuration
// (default-max-batch-size).
const AutoMaxBatchSize = 4

// Profile is the name of the model's curve in a reference profile set.
func (m *Model) Profile() string {
	if m.Config.Profile != "" {
		return m.Config.Profile
	}
	if m.Family != "" {
		return m.Family // every version of a model has its curve
	}
	return m.Name
}

// InfoReader reads the inputs and outputs of a model file, with full shapes
// (dimension 0 included; -1 where a dimension is dynamic).
type InfoReader func(path string) (inputs, outputs []TensorSpec, err error)

// Index is the result of a scan: the models that are fine and one error per
// entry that is not.
type Index struct {
	Roots  Roots
	Models map[string]*Model
	// Broken maps the folder name of each entry that is not fine to its
	// error.
	Broken map[string]error
	// ConfigName is the custom configuration name the folders were read
	// under (Options.ConfigName); CustomNames, when it is set, the names
	// of every custom configuration the folders hold (config_name.go).
	ConfigName  string
	CustomNames []string
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

// ValidName reports whether name may name a model folder: letters, digits,
// '.', '_' and '-', not starting with a '.', '_' or '-'.
func ValidName(name string) bool { return validName.MatchString(name) }

// Scan reads every model folder of the repositories. It fails only when a
// repository itself cannot be read; a broken entry, or a name more than one
// repository holds, goes to Index.Broken.
func Scan(roots Roots, o Options) (*Index, error) {
	folders, dangling, err := roots.Folders()
	if err != nil {
		return nil, err
	}
	ix := &Index{Roots: roots, Models: map[string]*Model{}, Broken: dangling, ConfigName: o.ConfigName}
	for _, f := range folders {
		switch {
		case len(f.Holders) > 1:
			ix.Broken[f.Name] = roots.several(f.Name, f.Holders)
			continue
		case ix.Broken[f.Name] != nil:
			continue // a dangling link of another repository: which folder serves is unknown
		}
		if o.ConfigName != "" {
			ix.CustomNames = append(ix.CustomNames, customConfigNames(filepath.Join(f.Holders[0], f.Name))...)
		}
		ms, err := LoadVersions(roots, f.Name, o)
		if err != nil {
			ix.Broken[f.Name] = err
			continue
		}
		for _, m := range ms {
			ix.Models[m.Name] = m
		}
	}
	slices.Sort(ix.CustomNames)
	ix.CustomNames = slices.Compact(ix.CustomNames)
	return ix, nil
}

// Options say how the repository is read.
type Options struct {
	// Read reads a model file's inputs and outputs (ONNX files).
	Read InfoReader
	// Open, when set, opens a model file (ONNX) in the runtime, after the
	// custom operator libraries its configuration names, before Read reads
	// it: a file the runtime cannot open makes the model invalid with the
	// runtime's reason.
	Open func(path string, opLibraries []string) error
	// DefaultSLO is the SLO of a model whose configuration gives none (the
	// server's default_slo); 0 makes such a model an error.
	DefaultSLO time.Duration
	// Digests, when set, remembers model files' digests between reads.
	Digests *DigestCache
	// Override, when not empty, is Triton's ModelConfig as JSON (the
	// repository load API's config parameter): Load uses it instead of the
	// folder's configuration files.
	Override []byte
	// ComputeCapabilities are those of the NVIDIA GPUs the models are
	// served on ("9.0"), distinct and sorted; none on the CPU and emulated
	// GPUs. They choose a file of a config.pbtxt's cc_model_filenames.
	ComputeCapabilities []string
	// DefaultMaxBatchSize is the max_batch_size of a model whose
	// configuration leaves it to a model file that batches (Triton's
	// --backend-config=default-max-batch-size); 0: AutoMaxBatchSize.
	DefaultMaxBatchSize int
	// ConfigName, when set, picks a folder's configs/<ConfigName>.pbtxt
	// over its config.pbtxt where it has one (Triton's
	// --model-config-name).
	ConfigName string
}

// OverrideSource names a configuration given with a load request
// (Model.ConfigFiles).
const OverrideSource = "load request config"

// Where a model's SLO came from (Model.SLOSource).
const (
	SLOFromYAML    = "config.yaml"
	SLOFromPbtxt   = "config.pbtxt parameters"
	SLOFromDefault = "default_slo"
	// SLOFromOverride: the parameters of a load request's config.
	SLOFromOverride = "load request parameters"
)

// YAMLConfigFile is the name of gpuletd's own model configuration.
const YAMLConfigFile = "config.yaml"

// Load reads one model folder: its configuration (config.pbtxt in Triton's
// layout, config.yaml, or both) and the newest version its version policy
// selects.
func Load(roots Roots, name string, o Options) (*Model, error) {
	ms, err := LoadVersions(roots, name, o)
	if err != nil {
		return nil, err
	}
	return ms[0], nil
}

// VersionKey is the Name of version v of the model folder family when it is
// served beside a newer one. Folder names cannot hold ':', so keys never
// clash with them.
func VersionKey(family string, v int) string {
	return family + ":" + strconv.Itoa(v)
}

// LoadVersions reads one model folder, from the repository that holds it,
// and returns every version its version policy selects, newest first; the
// newest is named after the folder, the others by VersionKey. They share
// the configuration; each has its own file and tensors.
func LoadVersions(roots Roots, name string, o Options) ([]*Model, error) {
	fail := func(file string, err error) ([]*Model, error) { return nil, invalid(file, err) }
	if !validName.MatchString(name) {
		return fail(filepath.Join(roots[0], name), fmt.Errorf("model name %q is not allowed; use letters, digits, '.', '_' and '-'", name))
	}
	root, err := roots.Locate(name)
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(root, name)
	base, err := readConfig(dir, name, o)
	if err != nil {
		return nil, err
	}
	if err := base.readLabels(); err != nil {
		return nil, err
	}
	if err := base.resolveOpLibraries(); err != nil {
		return nil, err
	}
	if err := base.verifyChecksums(o.Digests); err != nil {
		return nil, err
	}
	if base.Config.Ensemble != nil {
		if err := base.inlineNested(roots, o, nil); err != nil {
			return fail(base.configSource(), err)
		}
		return []*Model{base.ensemble()}, nil
	}
	all, err := versionFolders(dir)
	if err != nil {
		return fail(dir, err)
	}
	selected, err := base.Config.Versions.apply(all)
	if err != nil {
		return fail(dir, err)
	}
	selected = slices.Compact(slices.Sorted(slices.Values(selected)))
	filename, field, ccNote := base.Config.modelFileName(o.ComputeCapabilities)
	if ccNote != "" {
		base.Notes = append(base.Notes, ccNote)
	}
	if len(selected) > 1 {
		base.Notes = append(base.Notes, fmt.Sprintf("version_policy selects versions %v, served side by side: %d answers /v2/models/%s, each at /v2/models/%s/versions/<version>",
			selected, selected[len(selected)-1], name, name))
	}
	slices.Reverse(selected) // newest first
	out := make([]*Model, len(selected))
	for i, v := range selected {
		m := *base
		m.Family, m.Version = name, v
		m.Notes = slices.Clone(base.Notes)
		if i > 0 {
			m.Name = VersionKey(name, v)
		}
		vdir := filepath.Join(dir, strconv.Itoa(v))
		if m.Platform, m.File, err = modelFile(vdir, m.Config.Platform, filename, field); err != nil {
			return fail(vdir, err)
		}
		digest := DigestFile
		if o.Digests != nil {
			digest = o.Digests.Digest
		}
		d, err := digest(m.File, m.Platform)
		if err != nil {
			return fail(m.File, err)
		}
		m.SHA256, m.Bytes, m.ExternalData = d.SHA256, d.Bytes, d.ExternalData
		if err := m.foldRuntimeDigest(digest); err != nil {
			return nil, err
		}
		if o.Open != nil && m.Platform != PlatformTorchScript {
			if err := o.Open(m.File, m.OpLibraries); err != nil {
				return fail(m.File, err) // the runtime's reason, which an operator of it knows
			}
		}
		if err := m.resolveTensors(o.Read, o.DefaultMaxBatchSize); err != nil {
			return fail(m.File, err)
		}
		if err := m.checkProfileShapes(); err != nil {
			return fail(dir, err)
		}
		out[i] = &m
	}
	return out, nil
}

// ensemble is a pipeline folder as a servable: version 1 (Triton's layout
// has an empty version folder; none is needed), no model file, the
// configured tensors.
func (m *Model) ensemble() *Model {
	m.Version, m.Platform = 1, PlatformEnsemble
	m.Inputs, m.Outputs = slices.Clone(m.Config.Inputs), slices.Clone(m.Config.Outputs)
	return m
}

// invalid wraps a problem with a repository entry, naming its file once:
// a problem that names the file itself (ONNX Runtime's reader: "read model
// info F: …") is told from after its name. A file the daemon's user may not
// read says whose it is and how to let it.
func invalid(file string, err error) error {
	err = fsperm.ExplainRead(err, file)
	if _, rest, named := strings.Cut(err.Error(), file+": "); named {
		err = &reworded{msg: rest, err: err}
	}
	return fmt.Errorf("%w: %s: %w", ErrInvalidModel, file, err)
}

// reworded is an error told in other words; errors.Is and As see the
// original.
type reworded struct {
	msg string
	err error
}

func (e *reworded) Error() string { return e.msg }
func (e *reworded) Unwrap() error { return e.err }

// readConfig reads a model folder's configuration files, or the override,
// into a Model with Name, Dir, Config, ConfigFiles, SLOSource and Notes set.
func readConfig(dir, name string, o Options) (*Model, error) {
	m := &Model{Name: name, Family: name, Dir: dir}
	var sloFrom string // where the configuration gave an SLO; "" for nowhere
	if len(o.Override) > 0 {
		src := OverrideSource + " of " + name
		tc, err := parseTritonJSON(o.Override, name)
		if err != nil {
			return nil, invalid(src, err)
		}
		if len(tc.cfg.OpLibraries) > 0 {
			return nil, invalid(src, ErrOpLibrariesOverLoad)
		}
		m.Config, m.Notes, m.ConfigFiles = tc.cfg, tc.notes, []string{OverrideSource}
		m.autoBatch = tc.batchFromFile()
		if tc.sloSet {
			sloFrom = SLOFromOverride
		}
		if err := m.resolveSLO(sloFrom, o.DefaultSLO, src, `"parameters": {"slo": {"string_value": "50ms"}} in the config`); err != nil {
			return nil, err
		}
		return m, nil
	}
	pbName, pbData, perr := ReadTritonConfig(dir, o.ConfigName)
	yamlPath, pbPath := filepath.Join(dir, YAMLConfigFile), filepath.Join(dir, pbName)
	yamlData, yerr := os.ReadFile(yamlPath)
	switch {
	case yerr != nil && !errors.Is(yerr, os.ErrNotExist):
		return nil, invalid(yamlPath, yerr)
	case perr != nil && !errors.Is(perr, os.ErrNotExist):
		return nil, invalid(pbPath, perr)
	case yerr != nil && perr != nil && o.DefaultSLO <= 0:
		return nil, invalid(yamlPath, fmt.Errorf("missing; every model folder needs a %s (Triton's) or a %s with at least slo and max_batch_size, or a server-wide default_slo (GPULETD_DEFAULT_SLO) for folders with neither, whose model files say the rest", TritonConfigFile, YAMLConfigFile))
	case yerr != nil && perr != nil:
		// Triton's auto-completed configuration: the model file gives the
		// inputs, outputs and whether the model batches.
		m.autoBatch = true
		m.Notes = append(m.Notes, fmt.Sprintf("no %s or %s: served with default_slo and what the model file says (Triton's auto-completed configuration); a configuration file sets them", TritonConfigFile, YAMLConfigFile))
		return m, m.resolveSLO("", o.DefaultSLO, yamlPath, "")
	}
	sloFile := pbPath
	if perr == nil {
		tc, err := parseTriton(pbData, name)
		if err != nil {
			return nil, invalid(pbPath, err)
		}
		m.ConfigFiles = append(m.ConfigFiles, pbName)
		m.Config, m.Notes = tc.cfg, tc.notes
		m.autoBatch = tc.batchFromFile() && yerr != nil // else config.yaml sets it
		if tc.sloSet {
			sloFrom = SLOFromPbtxt
			if pbName != TritonConfigFile {
				sloFrom = pbName + " parameters" // as SLOFromPbtxt, of the custom configuration
			}
		}
	}
	if yerr == nil {
		cfg, err := ParseModelConfig(yamlData)
		if err != nil {
			return nil, invalid(yamlPath, err)
		}
		m.ConfigFiles = append(m.ConfigFiles, YAMLConfigFile)
		sloFile = yamlPath
		set := yamlKeys(yamlData)
		if cfg.SLO.D() == 0 {
			delete(set, "slo") // 0 is no SLO: the others' stands
		}
		if set["slo"] {
			sloFrom = SLOFromYAML
		}
		if perr == nil {
			if err := levelsFit(m.Config, set); err != nil {
				return nil, invalid(yamlPath, err)
			}
			m.Config = overlay(m.Config, cfg, set)
			m.Notes = append(m.Notes, fmt.Sprintf("%s and %s both present: %s wins for the fields it sets (%s), %s gives the rest",
				YAMLConfigFile, pbName, YAMLConfigFile, strings.Join(sortedKeys(set), ", "), pbName))
		} else {
			m.Config = cfg
		}
	}
	if err := m.resolveSLO(sloFrom, o.DefaultSLO, sloFile, `slo: 50ms in config.yaml, or parameters { key: "slo" value { string_value: "50ms" } } in config.pbtxt`); err != nil {
		return nil, err
	}
	return m, nil
}

// resolveSLO records where the SLO came from: the configuration (sloFrom),
// else the server's default; without either the entry is invalid, and the
// error, given for file, says how to give one (how).
func (m *Model) resolveSLO(sloFrom string, defaultSLO time.Duration, file, how string) error {
	switch {
	case sloFrom != "":
		m.SLOSource = sloFrom
	case defaultSLO > 0:
		m.Config.SLO, m.SLOSource = config.Duration(defaultSLO), SLOFromDefault
	default:
		return invalid(file, fmt.Errorf("slo: missing; give the latency objective (%s), or set a server-wide default_slo (GPULETD_DEFAULT_SLO)", how))
	}
	return nil
}

// IsFolder tells whether entry e of dir is a folder, or a symbolic link to
// one (a repository that links its model or version folders from elsewhere,
// as Triton's may).
func IsFolder(dir string, e fs.DirEntry) bool {
	if e.IsDir() {
		return true
	}
	if e.Type()&fs.ModeSymlink == 0 {
		return false
	}
	st, err := os.Stat(filepath.Join(dir, e.Name()))
	return err == nil && st.IsDir()
}

// danglingLink is the problem of entry e of root when it is a symbolic link
// that leads nowhere (its folder moved or not mounted): a model an operator
// linked in, which must say why it does not serve. Nil otherwise.
func danglingLink(root string, e fs.DirEntry) error {
	if e.Type()&fs.ModeSymlink == 0 {
		return nil
	}
	path := filepath.Join(root, e.Name())
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	target, _ := os.Readlink(path)
	return invalid(path, fmt.Errorf("a link to %s, which does not exist", target))
}

// versionFolders lists the numbered version folders, ascending.
func versionFolders(dir string) ([]int, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []int
	var others []string // folders that are not versions
	for _, e := range entries {
		if !IsFolder(dir, e) {
			continue
		}
		v, err := strconv.Atoi(e.Name())
		if err != nil || v < 1 || strconv.Itoa(v) != e.Name() {
			others = append(others, e.Name())
			continue
		}
		out = append(out, v)
	}
	if len(out) == 0 {
		found := ""
		if len(others) > 0 {
			found = fmt.Sprintf(" (%s: a version folder is named by a whole number from 1, as 1, 2, 3)", strings.Join(others, ", "))
		}
		return nil, fmt.Errorf("no version folder%s; put the model file in <model>/1/model.onnx", found)
	}
	sort.Ints(out)
	return out, nil
}

// apply selects from the version folders present (ascending) the ones the
// policy serves, ascending.
func (p VersionPolicy) apply(present []int) ([]int, error) {
	switch {
	case p.All:
		return present, nil
	case len(p.Specific) > 0:
		for _, v := range p.Specific {
			if !slices.Contains(present, v) {
				return nil, fmt.Errorf("version_policy.specific.versions: %d has no version folder (present: %v)", v, present)
			}
		}
		return p.Specific, nil
	case p.Latest > 1:
		return present[max(len(present)-p.Latest, 0):], nil
	}
	return present[len(present)-1:], nil
}

// modelFile finds the model file of a version folder: the configured file
// name (field names the configuration field that gave it), else the
// platform's, else whichever platform's file is present. An
// ONNX model's name may be a folder holding model.onnx and the files it
// keeps its weights in, as Triton's ONNX Runtime backend reads it.
func modelFile(vdir, platform, filename, field string) (string, string, error) {
	platform, f, err := findModelFile(vdir, platform, filename, field)
	if err != nil || platform != PlatformONNX {
		return platform, f, err
	}
	if st, err := os.Stat(f); err != nil || !st.IsDir() {
		return platform, f, nil
	}
	inner := filepath.Join(f, modelFiles[PlatformONNX])
	if st, err := os.Stat(inner); err != nil || st.IsDir() {
		return "", "", fmt.Errorf("%s is a folder without a file %s in it (an ONNX model in several files is a folder holding %s and its weights)",
			filepath.Base(f), modelFiles[PlatformONNX], modelFiles[PlatformONNX])
	}
	return platform, inner, nil
}

// findModelFile is modelFile before a folder is looked into.
func findModelFile(vdir, platform, filename, field string) (string, string, error) {
	if filename != "" {
		f := filepath.Join(vdir, filename)
		if _, err := os.Stat(f); err != nil {
			return "", "", fmt.Errorf("no %s (%s)", filename, field)
		}
		if platform == "" {
			for p, def := range modelFiles {
				if filepath.Ext(def) == filepath.Ext(filename) {
					platform = p
				}
			}
		}
		if platform == "" {
			return "", "", fmt.Errorf("%s %q: give platform or backend, the file name does not say", field, filename)
		}
		return platform, f, nil
	}
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
	found := ""
	if names := modelLikeFiles(vdir); len(names) > 0 {
		found = fmt.Sprintf(" (found %s: rename it, or name it in config.pbtxt's default_model_filename)", strings.Join(names, ", "))
	}
	return "", "", fmt.Errorf("no model file; expected model.onnx or model.pt%s", found)
}

// modelLikeFiles are the files of a version folder whose extension is a
// model file's (.onnx, .pt), sorted.
func modelLikeFiles(vdir string) []string {
	entries, err := os.ReadDir(vdir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		ext := filepath.Ext(e.Name())
		if ext == ".onnx" || ext == ".pt" {
			out = append(out, e.Name())
		}
	}
	return out
}
