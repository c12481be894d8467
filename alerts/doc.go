// Package alerts holds Prometheus alerting rules for gpuletd
// (gpuletd.rules.yml) and promtool's unit tests of them
// (gpuletd.rules.test.yml); its Go tests run promtool on both and check that
// every metric the rules read is one gpuletd documents. Operators copy the
// rules file next to their prometheus.yml.
package alerts

import (
	_ "embed"

	"github.com/gpulet/gpuletd/internal/promnames"
)

// Rules is gpuletd.rules.yml.
//
//go:embed gpuletd.rules.yml
var Rules []byte

// Metrics lists the gpuletd metric families the rules name, in their
// expressions and their words, sorted; a histogram's series (_bucket,
// _sum, _count) by its family's name.
func Metrics() []string { return promnames.Families(Rules) }
