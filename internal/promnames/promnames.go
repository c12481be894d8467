// Package promnames finds the gpuletd metric families that Prometheus
// queries name (the alerting rules', the Grafana dashboard's) and the
// families OPERATIONS.md documents, so that the tests of each can check
// that nothing they read was renamed away.
package promnames

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
)

// family matches a gpuletd metric family or one of its series.
var family = regexp.MustCompile(`\bgpuletd_[a-z_]+\b`)

// tableRow matches a row of OPERATIONS.md's metrics table.
var tableRow = regexp.MustCompile("^\\| `gpuletd_")

// Families lists the gpuletd metric families text names, sorted, each
// once; a histogram's series (_bucket, _sum, _count) by its family's name.
func Families(text []byte) []string {
	var out []string
	for _, name := range family.FindAllString(string(text), -1) {
		for _, suffix := range []string{"_bucket", "_sum", "_count"} {
			name = strings.TrimSuffix(name, suffix)
		}
		out = append(out, name)
	}
	return slices.Compact(slices.Sorted(slices.Values(out)))
}

// Undocumented lists those of names that the metrics table of the
// OPERATIONS.md at path has no row for.
func Undocumented(path string, names []string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	documented, err := documented(f)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if len(documented) == 0 {
		return nil, fmt.Errorf("read %s: no metrics table", path)
	}
	var out []string
	for _, name := range names {
		if !documented[name] {
			out = append(out, name)
		}
	}
	return out, nil
}

// documented reads OPERATIONS.md and returns the families its metrics
// table has a row for (the table's first column, "| `gpuletd_…` |").
func documented(operations io.Reader) (map[string]bool, error) {
	out := map[string]bool{}
	sc := bufio.NewScanner(operations)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if line := sc.Text(); tableRow.MatchString(line) {
			cell := strings.SplitN(line, "|", 3)[1] // the family column
			for _, name := range family.FindAllString(cell, -1) {
				out[name] = true
			}
		}
	}
	return out, sc.Err()
}
