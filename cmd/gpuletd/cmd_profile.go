package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/gpulet/gpuletd/daemon"
	"github.com/gpulet/gpuletd/daemon/config"
	"github.com/gpulet/gpuletd/daemon/repository"
	"github.com/gpulet/gpuletd/executor/onnxrt"
	"github.com/gpulet/gpuletd/mps"
	"github.com/gpulet/gpuletd/profiler"
	"github.com/gpulet/gpuletd/profiler/refset"
	"github.com/gpulet/gpuletd/profiler/store"
	"github.com/spf13/cobra"
	"go.uber.org/zap"
	"golang.org/x/term"
)

// profileFlags are the flags of gpuletd profile.
type profileFlags struct {
	device      string
	batches     []int
	partitions  []int
	pairs       bool
	pairBatches []int
	utilBatches []int
	ncuTimeout  time.Duration
	force       bool
	asJSON      bool
	plot        string
	slo         time.Duration
	rule        profiler.StopRule
	importSet   string
	knees       string

	// The solo process Nsight Compute profiles (hidden).
	ncuTarget    bool
	batch, runs  int
	maxBatchSize int
	library      string
	provider     string
}

func newProfileCmd(g *globalFlags) *cobra.Command {
	f := &profileFlags{}
	cmd := &cobra.Command{
		Use:   "profile MODEL",
		Short: "Measure a model's latency curves L(b,p) and store them",
		Long: `Measure a model's latency curves L(b,p) on one device over partition sizes p
and batch sizes b, with one executor per size, and keep them in the store
(state_dir/gpuletd.db) under the model file's sha256 and the device type.
MODEL is a model of the repositories (model_repository,
extra_model_repositories), a path to a model folder (a config.pbtxt's custom operator libraries are loaded as the daemon
loads them), or a path to a .onnx file. A second run reuses the stored
profile unless --force is given or the model file changed. On an emulated
device the reference set's physics is read instead of measured.

Each point is sampled until the 95% confidence interval of its median is
within ±2% and that of its p99 within ±10% (at least --min-samples samples),
or until --max-samples or --max-time. Ctrl-C keeps what was measured and
marks the rest incomplete.

Prints the p × b table of p50/p99, the fit ℓ(b) = α·b + β per size with R²,
and the knee of the affordable-rate curve (maximum curvature); --plot writes
L(b,p) with the knee marked (.svg or .png), --json prints the result.

  gpuletd profile --import SET     store a reference set as an emulated device type
  gpuletd profile --knees SET      print the knees of a reference set's curves`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runProfile(cmd, g, f, args)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.device, "device", "", "device id: cpu, gpu<N>, emu<N> (default: the first configured device)")
	fl.IntSliceVar(&f.batches, "batches", nil, "batch sizes (default 1,2,4,…,32 up to the model's max_batch_size; --knees: 8,32)")
	fl.IntSliceVar(&f.partitions, "partitions", nil, "partition sizes in percent (default: every size the device allows)")
	fl.BoolVar(&f.pairs, "pairs", false, "also measure the model beside itself on two gpu-lets (p and 100−p)")
	fl.IntSliceVar(&f.pairBatches, "pair-batches", nil, "batch grid of --pairs (default: smallest, middle and largest batch)")
	fl.IntSliceVar(&f.utilBatches, "util-batches", nil, "batches whose solo L2/DRAM utilisation is measured (default: every profiled batch)")
	fl.DurationVar(&f.ncuTimeout, "ncu-timeout", profiler.DefaultNCUTimeout, "longest Nsight Compute run for one point's utilisation; a longer one leaves it unmeasured")
	fl.BoolVar(&f.force, "force", false, "measure again even when a complete profile is stored")
	fl.BoolVar(&f.asJSON, "json", false, "print the result as JSON")
	fl.StringVar(&f.plot, "plot", "", "write a plot of L(b,p) with the knee (FILE.svg or FILE.png)")
	fl.DurationVar(&f.slo, "slo", 0, "SLO for the knee of a model file given by path (repository models have theirs)")
	fl.IntVar(&f.rule.Warmup, "warmup", 0, "discarded runs before sampling each point (default 3)")
	fl.IntVar(&f.rule.MinSamples, "min-samples", 0, "samples each point takes at least (default 20)")
	fl.IntVar(&f.rule.MaxSamples, "max-samples", 0, "samples each point takes at most (default 1000)")
	fl.DurationVar(&f.rule.MaxTime, "max-time", 0, "sampling time after which a point stops (default 30s)")
	fl.StringVar(&f.importSet, "import", "", "store a reference set as an emulated device type: "+strings.Join(refset.Names(), ", "))
	fl.StringVar(&f.knees, "knees", "", "print the knees of a reference set's affordable-rate curves at --batches")

	fl.BoolVar(&f.ncuTarget, "ncu-target", false, "run MODEL alone and exit (the process Nsight Compute profiles)")
	fl.IntVar(&f.batch, "batch", 1, "rows per batch (--ncu-target)")
	fl.IntVar(&f.runs, "runs", 5, "batches to run (--ncu-target)")
	fl.IntVar(&f.maxBatchSize, "max-batch-size", 1, "the model's max_batch_size; 0: no batch dimension (--ncu-target)")
	fl.StringVar(&f.library, "onnxruntime-library", "", "libonnxruntime.so.1 (--ncu-target)")
	fl.StringVar(&f.provider, "provider", "cuda", "onnxruntime execution provider (--ncu-target)")
	for _, name := range []string{"ncu-target", "batch", "runs", "max-batch-size", "onnxruntime-library", "provider"} {
		_ = fl.MarkHidden(name)
	}
	return cmd
}

func runProfile(cmd *cobra.Command, g *globalFlags, f *profileFlags, args []string) error {
	modes := 0
	for _, on := range []bool{len(args) == 1 && !f.ncuTarget, f.importSet != "", f.knees != "", f.ncuTarget} {
		if on {
			modes++
		}
	}
	if modes != 1 {
		return errors.New("requires exactly one of MODEL, --import SET or --knees SET")
	}
	ctx := cmd.Context()
	switch {
	case f.ncuTarget:
		if len(args) != 1 {
			return errors.New("--ncu-target requires a model file")
		}
		return profiler.RunSolo(ctx, profiler.SoloRun{Path: args[0], Batch: f.batch, Runs: f.runs,
			MaxBatchSize: f.maxBatchSize, Provider: f.provider, Library: f.library})
	case f.knees != "":
		return printKnees(cmd.OutOrStdout(), f)
	}
	l, err := g.loadConfig()
	if err != nil {
		return err
	}
	// A profile stored where the service does not look is minutes of a
	// GPU spent for nothing.
	if err := g.stateDirHint(l.Config.StateDir); err != nil {
		return err
	}
	log, err := g.logger(l)
	if err != nil {
		return err
	}
	defer func() { _ = log.Sync() }()
	cfg := l.Config
	st, err := store.Open(ctx, filepath.Join(cfg.StateDir, store.FileName), store.WithLogger(log.Named("store")),
		store.WithOwner(fmt.Sprintf("gpuletd profile (pid %d)", os.Getpid())))
	if err != nil {
		return fmt.Errorf("open store (state_dir %s): %w", cfg.StateDir, err)
	}
	defer func() { _ = st.Close() }()
	// A profile killed midway (no daemon started since to say so) left its
	// run running; runs a daemon is measuring now are its own.
	if _, err := st.InterruptLeftRuns(ctx); err != nil {
		log.Warn("mark left profile runs", zap.Error(err))
	}
	if f.importSet != "" {
		return importSet(ctx, cmd.OutOrStdout(), st, f)
	}
	return profileModel(ctx, cmd, cfg, st, log, f, args[0])
}

// printKnees prints the knee report of a reference set.
func printKnees(w io.Writer, f *profileFlags) error {
	set, err := refset.Load(f.knees)
	if err != nil {
		return fmt.Errorf("%w (sets: %s)", err, strings.Join(refset.Names(), ", "))
	}
	batches := f.batches
	if len(batches) == 0 {
		batches = []int{8, 32}
	}
	rep, err := profiler.Knees(set, batches)
	if err != nil {
		return err
	}
	if f.asJSON {
		return printJSON(w, rep)
	}
	return profiler.WriteKnees(w, rep)
}

// importSet stores a reference set as an emulated device type.
func importSet(ctx context.Context, w io.Writer, st *store.Store, f *profileFlags) error {
	set, err := refset.Load(f.importSet)
	if err != nil {
		return fmt.Errorf("%w (sets: %s)", err, strings.Join(refset.Names(), ", "))
	}
	rep, err := profiler.ImportSet(ctx, st, set)
	if err != nil {
		return err
	}
	if f.asJSON {
		return printJSON(w, rep)
	}
	_, err = fmt.Fprintf(w, "imported %s as device type %s into %s: %d models, %d latency points (%d filled), %d utilisation rows, %d co-locations (%d replaced)\n",
		rep.Set, rep.DeviceType, st.Path(), rep.Models, rep.Points, rep.Derived, rep.Util, rep.Pairs, rep.ReplacedPairs)
	return err
}

// profileModel runs one profiling job and prints its result.
func profileModel(ctx context.Context, cmd *cobra.Command, cfg config.Config, st *store.Store, log *zap.Logger, f *profileFlags, arg string) error {
	spec, err := daemon.DeviceSpec(cfg)
	if err != nil {
		return err
	}
	var lib nvml.Interface
	if spec.Mode != mps.ModeCPU {
		lib = nvml.New()
	}
	holder, beside := daemonBeside(cfg.RuntimeDir)
	devs, err := mps.New(mps.Options{Spec: spec, NVML: lib, Logger: log.Named("devices"), BorrowMPS: beside})
	if err != nil {
		return err
	}
	startedMPS := false
	defer func() { _ = closeProfileDevices(ctx, devs, cfg.RuntimeDir, startedMPS, log) }()
	inv := devs.Inventory()
	id := f.device
	if id == "" && len(inv.Devices) > 0 {
		id = inv.Devices[0].ID
	}
	dev, err := inv.Device(id)
	if err != nil {
		return err
	}

	ortLib, ortErr := onnxrt.FindLibrary(cfg.ONNXRuntime.Library)
	model, err := resolveModel(cfg, arg, f, ortLib, ortErr, mps.ComputeCapabilities(inv.Devices))
	if err != nil {
		return err
	}
	job := profiler.Job{
		Model: model, Device: dev, Sizes: f.partitions, Batches: f.batches, Pairs: f.pairs, PairBatches: f.pairBatches,
		UtilBatches: f.utilBatches, Force: f.force, Rule: f.rule, Store: st, Log: log.Named("profile"),
	}
	if dev.Kind != mps.KindEmulated {
		if ortErr != nil {
			return ortErr
		}
		if dev.Kind == mps.KindNVIDIA && dev.Backend == mps.BackendMPS {
			if beside {
				if err := mpsUserCheck(dev.MPSPipeDir, os.Geteuid()); err != nil {
					return err
				}
			}
			startedMPS = !beside
			if err := devs.Start(ctx); err != nil {
				return err
			}
		}
		sockets, err := os.MkdirTemp("", "gpuletd-profile-")
		if err != nil {
			return fmt.Errorf("profile: %w", err)
		}
		defer os.RemoveAll(sockets)
		job.Launcher = &profiler.ProcessLauncher{Devices: devs, SocketDir: sockets, Library: ortLib, Log: log.Named("executors"),
			Provider: cfg.ONNXRuntime.Provider, Env: daemon.CUDAEnv(cfg)}
		job.Meters = utilMeters(dev, lib, ortLib, f.ncuTimeout)
	}
	stderr := cmd.ErrOrStderr()
	bar := profiler.NewProgressBar(stderr, isTerminal(stderr))
	job.Progress = bar.Update
	if beside && dev.Kind != mps.KindEmulated {
		// Said once something is measured: a stored profile reused is not.
		noted := false
		job.Progress = func(p profiler.Progress) {
			if !noted {
				noted = true
				besideNote(stderr, cfg.RuntimeDir, holder, dev.ID)
			}
			bar.Update(p)
		}
	}
	killedForMemory := daemon.ProfileOOMCheck()
	res, err := profiler.Measure(ctx, job)
	bar.Close()
	out := cmd.OutOrStdout()
	if err != nil && len(res.Batches) > 0 {
		err = killedForMemory(err, slices.Max(res.Batches))
	}
	if err != nil {
		if errors.Is(err, profiler.ErrInterrupted) {
			// What was measured is kept in the store; --json prints it too,
			// so a campaign stopped by its time limit loses nothing.
			if f.asJSON {
				if perr := printJSON(out, res); perr != nil {
					return perr
				}
			}
			return &exitError{code: 130, msg: "gpuletd profile: " + err.Error()}
		}
		if isModelFile(arg) && strings.Contains(err.Error(), onnxrt.UnregisteredOp) {
			// A bare file has no configuration to name its libraries.
			return fmt.Errorf("%w; to load the libraries its config.pbtxt names, profile the model folder: gpuletd profile %s", err, modelFolderOf(arg))
		}
		return err
	}
	if f.plot != "" {
		if err := profiler.WritePlot(res, f.plot); err != nil {
			return err
		}
	}
	if f.asJSON {
		return printJSON(out, res)
	}
	if err := profiler.WriteTable(out, res); err != nil {
		return err
	}
	if f.plot != "" {
		fmt.Fprintf(out, "\nplot written to %s\n", f.plot)
	}
	if beside && !res.Reused && !isModelFile(arg) && !isModelFolder(arg) { // a model of the daemon's repository
		fmt.Fprintf(out, "\ngpuletd%s places %s with this profile at its next plan; to have it now: gpuletd models load %s\n", holder, model.Name, model.Name)
	}
	return nil
}

// resolveModel finds MODEL: a path to a model file, else a model of the
// repository, read as serve reads it on GPUs of the compute capabilities
// ccs (the file cc_model_filenames gives them).
func resolveModel(cfg config.Config, arg string, f *profileFlags, ortLib string, ortErr error, ccs []string) (profiler.Model, error) {
	if isModelFile(arg) {
		d, err := repository.DigestFile(arg, repository.PlatformONNX)
		if err != nil {
			return profiler.Model{}, fmt.Errorf("model file %s: %w", arg, err)
		}
		abs, err := filepath.Abs(arg)
		if err != nil {
			return profiler.Model{}, err
		}
		top := 32
		if len(f.batches) > 0 {
			top = slices.Max(f.batches)
		}
		return profiler.Model{Name: fileModelName(abs), Path: abs, SHA256: d.SHA256, Platform: repository.PlatformONNX,
			SLOMS: float64(f.slo.Microseconds()) / 1000, MaxBatchSize: top}, nil
	}
	folder := isModelFolder(arg)
	if !folder && (strings.ContainsRune(arg, os.PathSeparator) || strings.HasSuffix(arg, ".onnx")) {
		return profiler.Model{}, fmt.Errorf("model file %s does not exist", arg)
	}
	if ortErr != nil {
		return profiler.Model{}, ortErr
	}
	if err := onnxrt.Init(ortLib); err != nil {
		return profiler.Model{}, err
	}
	repos, name := repository.Roots(cfg.ModelRepositories()), arg
	if folder { // a model folder anywhere: its configuration, custom operator libraries included
		abs, err := filepath.Abs(arg)
		if err != nil {
			return profiler.Model{}, err
		}
		repos, name = repository.Roots{filepath.Dir(abs)}, filepath.Base(abs)
	}
	o := daemon.RepositoryOptions(&cfg)
	o.ComputeCapabilities = ccs
	m, err := repository.Load(repos, name, o)
	if errors.Is(err, repository.ErrNotFound) {
		return profiler.Model{}, fmt.Errorf("no model %q in the model repositories (%s) and no such file (give a repository model name or a path to a .onnx file)%s",
			arg, repos, repos.DidYouMean(arg))
	}
	if err != nil {
		return profiler.Model{}, err
	}
	pm := daemon.ProfilerModel(m)
	if f.slo > 0 {
		pm.SLOMS = float64(f.slo.Microseconds()) / 1000
	}
	return pm, nil
}

// isModelFile says whether MODEL names a file rather than a model of the
// repository.
func isModelFile(arg string) bool {
	fi, err := os.Stat(arg)
	return err == nil && !fi.IsDir()
}

// modelFolderOf is the model folder of a model file, <model>/<version>/FILE,
// in words when the path is not in one.
func modelFolderOf(file string) string {
	abs, err := filepath.Abs(file)
	if err != nil {
		return "MODEL_FOLDER"
	}
	if v := filepath.Dir(abs); isVersion(filepath.Base(v)) {
		return filepath.Dir(v)
	}
	return "MODEL_FOLDER"
}

// isVersion says whether a folder's name is a version number.
func isVersion(name string) bool {
	n, err := strconv.Atoi(name)
	return err == nil && n > 0
}

// isModelFolder says whether MODEL is a path to a folder (a model folder,
// in the repository or not) rather than a model's name.
func isModelFolder(arg string) bool {
	if !strings.ContainsRune(arg, os.PathSeparator) {
		return false // a name, even where a folder of that name is in the working directory
	}
	fi, err := os.Stat(arg)
	return err == nil && fi.IsDir()
}

// fileModelName names a bare model file: its base name without extension,
// or for <repo>/<model>/<version>/model.onnx the model folder's name.
func fileModelName(path string) string {
	base := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	if base == "model" {
		if dir := filepath.Base(filepath.Dir(filepath.Dir(path))); dir != "." && dir != string(os.PathSeparator) {
			return dir
		}
	}
	return base
}

// utilMeters are the utilisation meters the device allows: Nsight Compute
// when ncu is installed, NVML GPM (Hopper and newer); none on the CPU.
func utilMeters(d mps.Device, lib nvml.Interface, ortLib string, ncuTimeout time.Duration) []profiler.UtilMeter {
	if d.Kind != mps.KindNVIDIA {
		return nil
	}
	var meters []profiler.UtilMeter
	if path, err := exec.LookPath("ncu"); err == nil {
		if self, err := os.Executable(); err == nil {
			meters = append(meters, &profiler.NCU{Path: path, Target: profiler.SoloTarget(self, ortLib, 5), Timeout: ncuTimeout})
		}
	}
	if lib != nil {
		meters = append(meters, &profiler.GPM{Lib: lib})
	}
	return meters
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	fh, ok := w.(*os.File)
	return ok && term.IsTerminal(int(fh.Fd()))
}
