package main

import (
	"encoding/json"

	"github.com/spf13/cobra"

	"github.com/gpulet/gpuletd/executor/gpuprobe"
	"github.com/gpulet/gpuletd/executor/onnxrt"
)

// newProbeCmd is the child process that checks the GPU engine (started by
// serve and doctor): it prints one JSON result and exits 0 unless it cannot
// even say why.
func newProbeCmd() *cobra.Command {
	var o gpuprobe.Options
	cmd := &cobra.Command{
		Use:    gpuprobe.Command,
		Short:  "Check that an execution provider loads and runs a model (started by serve and doctor)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.Library == "" {
				lib, err := onnxrt.FindLibrary("")
				if err != nil {
					return err
				}
				o.Library = lib
			}
			r := gpuprobe.Probe(cmd.Context(), o)
			return json.NewEncoder(cmd.OutOrStdout()).Encode(r)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Provider, "provider", "cuda", "execution provider: cuda, tensorrt or cpu")
	f.StringVar(&o.Library, "onnxruntime-library", "", "libonnxruntime.so.1 (default: search)")
	f.StringVar(&o.ProviderDir, "provider-dir", "", "directory of the provider libraries (default: beside the library)")
	return cmd
}
