package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"
)

// paperFlags are the flags every paper experiment takes.
type paperFlags struct {
	seed   uint64
	asJSON bool
	plot   string
}

// add registers the flags; name is the experiment's, for the plot file.
func (p *paperFlags) add(cmd *cobra.Command, name string) {
	cmd.Flags().Uint64Var(&p.seed, "seed", 1, "seed of the arrivals and jitter")
	cmd.Flags().BoolVar(&p.asJSON, "json", false, "print JSON instead of the table")
	cmd.Flags().StringVar(&p.plot, "plot", "docs/images/"+name+".svg", "plot file (.svg or .png; empty: none)")
}

// finish draws the plot, if asked, and says where it is.
func (p *paperFlags) finish(w io.Writer, draw func(file string) error) error {
	if p.plot == "" {
		return nil
	}
	if err := draw(p.plot); err != nil {
		return err
	}
	if !p.asJSON {
		fmt.Fprintf(w, "plot: %s\n", p.plot)
	}
	return nil
}
