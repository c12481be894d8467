// Command gen rewrites the embedded reference files (../data/*.ref) from the
// original sources in the shared data folder and, for measured sets, this
// package's measured/ folder. Run it with `go generate
// ./profiler/refset` from the repository root; -shared overrides where the
// originals are.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/gpulet/gpuletd/profiler/refset"
)

func main() {
	shared := flag.String("shared", "../../../shared/data", "folder holding the original reference data")
	local := flag.String("local", ".", "folder of the refset package, which holds the measured origins (measured/…)")
	out := flag.String("out", "data", "folder to write the .ref files to")
	flag.Parse()
	if err := run(*shared, *local, *out); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(shared, local, out string) error {
	for _, name := range refset.Names() {
		origin, err := refset.Origin(name)
		if err != nil {
			return err
		}
		var buf bytes.Buffer
		if err := refset.ConvertOrigin(name, refset.OriginFile(origin, shared, local), &buf); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(out, name+".ref"), buf.Bytes(), 0o644); err != nil {
			return fmt.Errorf("write %s: %w", name, err)
		}
	}
	return nil
}
