package main

import (
	"errors"

	"github.com/gpulet/gpuletd/daemon/config"
	"github.com/gpulet/gpuletd/executor"
	"github.com/spf13/cobra"
)

func newExecutorCmd(g *globalFlags) *cobra.Command {
	var o executor.ProcessOptions
	cmd := &cobra.Command{
		Use:    "executor",
		Short:  "Serve one gpu-let (started by gpuletd serve)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			lc := config.Default().Log
			if g.logLevel != "" {
				lc.Level = g.logLevel
			}
			if g.logFormat != "" {
				lc.Format = g.logFormat
			}
			log, err := newLogger(lc, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			defer func() { _ = log.Sync() }()
			o.Log = log.Named("executor")
			err = executor.RunProcess(cmd.Context(), o)
			if errors.Is(err, executor.ErrRunHung) {
				// The daemon starts a new executor, and takes what ran
				// for suspects.
				return &exitError{code: executor.ExitRunHung, msg: err.Error()}
			}
			if errors.Is(err, executor.ErrDeviceFault) {
				// The daemon starts a new executor and says why.
				return &exitError{code: executor.ExitDeviceFault, msg: err.Error()}
			}
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Socket, "socket", "", "Unix socket to serve on")
	f.StringVar(&o.Policy, "policy", "deferred", "batch scheduling policy: deferred, eager, timeout:<d>, flex")
	f.IntVar(&o.MaxQueue, "max-queue", 0, "queued requests per model (0: default)")
	f.StringVar(&o.Provider, "provider", "", "onnxruntime execution provider on NVIDIA gpu-lets: cuda or tensorrt")
	f.StringVar(&o.Library, "onnxruntime-library", "", "libonnxruntime.so.1 (default: search)")
	f.DurationVar(&o.HangFloor, "hang-floor", 0, "least time a batch runs before it is taken for a run that will not end (0: 5s on the CPU, 30s on GPUs)")
	f.BoolVar(&o.Expendable, "expendable", false, "an executor that only measures (a profile job's): the kernel's out-of-memory killer takes it before those that serve")
	return cmd
}
