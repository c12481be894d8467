// Package alerts holds Prometheus alerting rules for gpuletd
// (gpuletd.rules.yml) and promtool's unit tests of them
// (gpuletd.rules.test.yml); its Go tests run promtool on both and check that
// every metric the rules read is one gpuletd documents. Operators copy the
// rules file next to their prometheus.yml.
package alerts

import (
	_ "embed"
	"regexp"
	"slices"
	"strings"
)

// Rules is gpuletd.rules.yml.
//
//go:embed gpuletd.rules.yml
var Rules []byte

// metricName matches a gpuletd metric family.
var metricName = regexp.MustCompile(`\bgpuletd_[a-z_]+\b`)

// Metrics lists the gpuletd metric families the rules name, in their
// expressions and their words, sorted; a histogram's series (_bucket,
// _sum, _count) by its family's name.
func Metrics() []string {
	var out []string
	for _, name := range metricName.FindAllString(string(Rules), -1) {
		for _, suffix := range []string{"_bucket", "_sum", "_count"} {
			name = strings.TrimSuffix(name, suffix)
		}
		out = append(out, name)
	}
	return slices.Compact(slices.Sorted(slices.Values(out)))
}
