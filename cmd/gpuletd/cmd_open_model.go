package main

import (
	"github.com/spf13/cobra"

	"github.com/gpulet/gpuletd/executor/onnxrt"
	"github.com/gpulet/gpuletd/internal/modelopen"
)

// newOpenModelCmd is the child process that opens one model file with its
// custom operator libraries for a repository check (models check, doctor):
// it exits 0 when ONNX Runtime opens it, modelopen.ExitCannotOpen with the
// reason when it cannot; a library that crashes ends this process alone.
func newOpenModelCmd() *cobra.Command {
	var library string
	var opLibraries []string
	cmd := &cobra.Command{
		Use:    modelopen.Command + " FILE",
		Short:  "Open a model file in ONNX Runtime with its custom operator libraries (started by models check and doctor)",
		Hidden: true,
		Args:   cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			lib, err := onnxrt.FindLibrary(library)
			if err == nil {
				err = modelopen.Open(lib, args[0], opLibraries)
			}
			if err != nil {
				return &exitError{code: modelopen.ExitCannotOpen, msg: err.Error()}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&library, "onnxruntime-library", "", "libonnxruntime.so.1 (default: search)")
	f.StringArrayVar(&opLibraries, "op-library", nil, "a custom operator library to load first, in order (repeat)")
	return cmd
}
