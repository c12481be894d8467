package daemon

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/gpulet/gpuletd/daemon/config"
	"github.com/gpulet/gpuletd/daemon/repository"
	"github.com/gpulet/gpuletd/executor/onnxrt"
	"github.com/gpulet/gpuletd/internal/modelopen"
)

// ModelsReport is the model repositories as serve would read them: how
// many folders they hold and which cannot be served, and what
// startup_models would do with them (`gpuletd models check` lists the
// rest).
type ModelsReport struct {
	Paths   []string `json:"paths"` // the repositories, in order
	Folders int      `json:"folders"`
	// Broken maps each folder that cannot be served to why: a broken
	// entry, or a pipeline whose step cannot be served.
	Broken map[string]string `json:"broken"`
	// NotLoaded are the folders startup_models leaves out at start;
	// StartupUnknown the names it gives that have no folder.
	NotLoaded      []string `json:"not_loaded,omitempty"`
	StartupUnknown []string `json:"startup_unknown,omitempty"`
	// Warnings maps each servable whose requests cannot fit
	// limits.max_request_body to why (RequestLimitWarning), and each
	// pipeline whose path_accuracy names paths no request runs to them
	// (Model.PathsNotRun).
	Warnings map[string]string `json:"warnings,omitempty"`
	// ConfigNameNote says which folders serve with their custom
	// configuration of model_config_name; ConfigNameWarning, in its place,
	// that none does (Index.ConfigNameNote).
	ConfigNameNote    string `json:"config_name_note,omitempty"`
	ConfigNameWarning string `json:"config_name_warning,omitempty"`
}

// RepositoryReport judges the scanned repository ix as serve would, with
// startup_models set to startup and limits.max_request_body to
// maxRequestBody.
func RepositoryReport(ix *repository.Index, startup []string, maxRequestBody int64) *ModelsReport {
	r := &ModelsReport{Paths: ix.Roots, Broken: map[string]string{}, Warnings: map[string]string{}}
	folders := map[string]bool{}
	// Every servable by name, which a pipeline's step versions and variants
	// are looked for among.
	all := slices.SortedFunc(maps.Values(ix.Models), func(a, b *repository.Model) int { return strings.Compare(a.Name, b.Name) })
	for name, err := range ix.Broken {
		folders[name] = true
		r.Broken[name] = err.Error()
	}
	for _, m := range ix.Models {
		folders[m.Family] = true
		if w := RequestLimitWarning(m, maxRequestBody); w != "" {
			r.Warnings[m.Name] = w
		}
		if m.Config.Ensemble == nil {
			continue
		}
		// A pipeline whose step cannot be served loads, and serves nothing.
		for _, s := range m.Config.Ensemble.Steps {
			if _, ok := ix.Models[s.StepKey()]; ok {
				continue
			}
			why := fmt.Sprintf("its step %s is not in the repository, so the pipeline cannot run", s.StepKey())
			if _, broken := ix.Broken[s.Model]; broken {
				why = fmt.Sprintf("its step %s is broken, so the pipeline cannot run", s.StepKey())
			} else if v := s.VersionNotServed(all); v != "" {
				why = fmt.Sprintf("its step %s is not served, so the pipeline cannot run: %s", s.StepKey(), v)
			}
			r.Broken[m.Family] = why
			break
		}
		if _, broken := r.Broken[m.Family]; broken {
			continue
		}
		// Steps that do not fit it (names, data types, shapes), as serve
		// finds them when it loads the pipeline.
		steps, err := m.CheckEnsemble(func(name string) *repository.Model { return ix.Models[name] })
		if err != nil {
			r.Broken[m.Family] = err.Error()
			continue
		}
		// Entries of its path_accuracy table no request can run.
		if ws := m.PathsNotRun(steps, all); len(ws) > 0 {
			if w := r.Warnings[m.Name]; w != "" {
				ws = append(ws, w)
			}
			r.Warnings[m.Name] = strings.Join(ws, "; ")
		}
	}
	r.Folders = len(folders)
	r.NotLoaded, r.StartupUnknown = StartupPlan(ix, startup)
	if note, warn := ix.ConfigNameNote(); warn {
		r.ConfigNameWarning = note
	} else {
		r.ConfigNameNote = note
	}
	return r
}

// RepositoryOptions are how serve reads model folders under cfg: the model
// files' inputs and outputs from the files alone (no weights loaded: the
// daemon's memory does not grow with the models', and a rescan takes the
// time of a read), its default_slo for a model that gives none and its
// default_max_batch_size for one that leaves max_batch_size to its file,
// and its model_config_name's custom configurations.
func RepositoryOptions(cfg *config.Config) repository.Options {
	return repository.Options{Read: repository.ReadONNXInterface, DefaultSLO: cfg.DefaultSLO.D(), ConfigName: cfg.ModelConfigName,
		DefaultMaxBatchSize: cfg.DefaultMaxBatchSize}
}

// ScanRepository reads the model repositories dirs as serve does with cfg
// (its default_slo) on GPUs of the compute capabilities ccs
// (ServedCapabilities), and loads each ONNX file in ONNX Runtime too
// (which must be initialized), which serve leaves to the executors: a file
// the runtime cannot load is found before a server is. A model with custom
// operator libraries is opened in a child process of binary (OpenInChild).
func ScanRepository(dirs []string, cfg config.Config, binary string, ccs []string) (*repository.Index, error) {
	o := RepositoryOptions(&cfg)
	o.Open = OpenInChild(binary)
	o.ComputeCapabilities = ccs
	return repository.Scan(dirs, o)
}

// modelsReport reads the repositories of cfg (ONNX Runtime loaded) as
// serve would on GPUs of the compute capabilities ccs; nil when a folder
// cannot be read, which the folder checks report.
func modelsReport(cfg config.Config, binary string, ccs []string) *ModelsReport {
	ix, err := ScanRepository(cfg.ModelRepositories(), cfg, binary, ccs)
	if err != nil {
		return nil
	}
	return RepositoryReport(ix, cfg.StartupModels, int64(cfg.Limits.MaxRequestBody))
}

// Where names the repositories read, for a sentence.
func (r *ModelsReport) Where() string { return strings.Join(r.Paths, " and ") }

// WarningNames lists the servables with a warning, sorted.
func (r *ModelsReport) WarningNames() []string { return slices.Sorted(maps.Keys(r.Warnings)) }

// BrokenNames lists the folders that cannot be served, sorted.
func (r *ModelsReport) BrokenNames() []string { return slices.Sorted(maps.Keys(r.Broken)) }

// Summary says in a line how many folders serve and which cannot.
func (r *ModelsReport) Summary() string {
	broken := r.BrokenNames()
	if r.Folders == 0 {
		return "no model folders in " + r.Where() + " yet"
	}
	if len(broken) == 0 {
		return fmt.Sprintf("%d folder(s) in %s, all can be served", r.Folders, r.Where())
	}
	return fmt.Sprintf("%d of %d folder(s) in %s can be served; %s cannot", r.Folders-len(broken), r.Folders, r.Where(), strings.Join(broken, ", "))
}

// OpenInRuntime opens a model file in ONNX Runtime (initialized), after
// the custom operator libraries its configuration names, as an executor
// does, in this process: a repository.Options.Open, the check that the
// runtime can load the file.
func OpenInRuntime(path string, opLibraries []string) error {
	_, err := onnxrt.ReadModelInfo(path, opLibraries...)
	return err
}

// openTimeout bounds how long OpenInChild waits for its child: opening a
// model takes seconds at most, a library's registration that hangs longer.
const openTimeout = 2 * time.Minute

// OpenInChild is OpenInRuntime for ScanRepository: a model without custom
// operator libraries is opened in this process, one with them in a child
// of binary ("": this one), so that a library that crashes fails that
// model's check alone, with the crash's headline as its reason.
func OpenInChild(binary string) func(path string, opLibraries []string) error {
	return func(path string, opLibraries []string) error {
		lib, loaded := onnxrt.Library()
		if len(opLibraries) == 0 || !loaded {
			return OpenInRuntime(path, opLibraries)
		}
		ctx, cancel := context.WithTimeoutCause(context.Background(), openTimeout, fmt.Errorf("none within %v", openTimeout))
		defer cancel()
		return modelopen.InChild(ctx, binary, lib, path, opLibraries)
	}
}
