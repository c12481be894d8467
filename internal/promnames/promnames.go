// Package promnames finds the gpuletd metric families that Prometheus
// queries name (the alerting rules', the Grafana dashboard's) and the
// families OPERATIONS.md documents, so that the tests of each can check
// that nothing they read was renamed away.
package promnames

import (
	"bufio"
	"io"
	"regexp"
	"slices"
	"strings"
)

// family matches a gpuletd metric family or one of its series.
var family = regexp.MustCompile(`\bgpuletd_[a-z_]+\b`)

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

// Documented reads OPERATIONS.md and returns the families its metrics
// table has a row for (the table's first column, "| `gpuletd_…` |").
func Documented(operations io.Reader) (map[string]bool, error) {
	row := regexp.MustCompile("^\\| `gpuletd_")
	out := map[string]bool{}
	sc := bufio.NewScanner(operations)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if line := sc.Text(); row.MatchString(line) {
			cell := strings.SplitN(line, "|", 3)[1] // the family column
			for _, name := range family.FindAllString(cell, -1) {
				out[name] = true
			}
		}
	}
	return out, sc.Err()
}
