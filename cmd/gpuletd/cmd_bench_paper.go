package main

import (
	"fmt"
	"io"

	"github.com/gpulet/gpuletd/sim"

	"github.com/spf13/cobra"
)

// paperFlags are the flags every paper experiment takes.
type paperFlags struct {
	seed   uint64
	seeds  int
	asJSON bool
	plot   string
}

// add registers the flags; name is the experiment's, for the plot file.
// Experiments that run several seeds take --seeds too (addSeeds).
func (p *paperFlags) add(cmd *cobra.Command, name string) {
	cmd.Flags().Uint64Var(&p.seed, "seed", 1, "seed of the arrivals and jitter (the first one, with --seeds)")
	cmd.Flags().BoolVar(&p.asJSON, "json", false, "print JSON instead of the table")
	cmd.Flags().StringVar(&p.plot, "plot", "", "write a plot to this file (.svg or .png; e.g. docs/images/"+name+".svg); none unless given")
}

// addSeeds registers --seeds.
func (p *paperFlags) addSeeds(cmd *cobra.Command) {
	cmd.Flags().IntVar(&p.seeds, "seeds", sim.DefaultSeeds, "how many seeds (seed, seed+1, …); reports give the median and range")
}

// report draws the plot, if asked (and says where it is), then prints
// asJSON as JSON with --json, else the table.
func (p *paperFlags) report(w io.Writer, draw func(file string) error, asJSON any, table func(io.Writer) error) error {
	if p.plot != "" {
		if err := draw(p.plot); err != nil {
			return err
		}
		if !p.asJSON {
			fmt.Fprintf(w, "plot: %s\n", p.plot)
		}
	}
	if p.asJSON {
		return printJSON(w, asJSON)
	}
	return table(w)
}

// sharedData is the shared data folder given with --data, or else the one
// found from the working directory upwards (sim.FindData).
func sharedData(given string) (string, error) {
	if given != "" {
		return given, nil
	}
	return sim.FindData(".")
}
