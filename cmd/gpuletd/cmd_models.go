package main

import (
	"errors"
	"fmt"

	"github.com/gpulet/gpuletd/modelzoo"
	"github.com/spf13/cobra"
)

func newModelsCmd(g *globalFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "models",
		Short: "Make a demo model repository; list and show a daemon's models",
	}
	cmd.AddCommand(newModelsSynthCmd(), &cobra.Command{
		Use:   "list",
		Short: "List the models a running daemon serves",
		RunE:  func(*cobra.Command, []string) error { return errNotAvailable("models list") },
	}, &cobra.Command{
		Use:   "show MODEL",
		Short: "Show one model of a running daemon",
		RunE:  func(*cobra.Command, []string) error { return errNotAvailable("models show") },
	})
	return cmd
}

func newModelsSynthCmd() *cobra.Command {
	var (
		models []string
		seed   uint64
		force  bool
	)
	cmd := &cobra.Command{
		Use:   "synth DIR",
		Short: "Write a demo model repository of ONNX graphs with seeded random weights",
		Long: fmt.Sprintf(`Write a model repository into DIR: <model>/config.yaml and <model>/1/model.onnx
for each model. The graphs are real ONNX models (LeNet-5, ResNet-18-style,
VGG-style, MLP) with random weights drawn from --seed: the same seed writes
byte-identical files. They are not pretrained.

Models: %v (default %v).`, modelzoo.Names(), modelzoo.DemoModels()),
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var opts []modelzoo.WriteOption
			if force {
				opts = append(opts, modelzoo.WithOverwrite())
			}
			if err := modelzoo.WriteRepository(args[0], models, seed, opts...); err != nil {
				if errors.Is(err, modelzoo.ErrRepositoryNotEmpty) {
					return fmt.Errorf("%s is not empty: choose an empty directory or pass --force", args[0])
				}
				return err
			}
			names := models
			if len(names) == 0 {
				names = modelzoo.DemoModels()
			}
			cmd.Printf("wrote %d models to %s: %v\n", len(names), args[0], names)
			return nil
		},
	}
	cmd.Flags().StringSliceVar(&models, "models", nil, "models to write (default: the demo set)")
	cmd.Flags().Uint64Var(&seed, "seed", 1, "seed of the random weights")
	cmd.Flags().BoolVar(&force, "force", false, "write into a directory that is not empty")
	return cmd
}
