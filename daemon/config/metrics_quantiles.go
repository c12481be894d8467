package config

import (
	"fmt"
	"strconv"
	"strings"
)

// SummaryObjectives reads metrics.triton_summary_quantiles, each
// "quantile:allowed error" (Triton's --metrics-config summary_quantiles
// form), as a Prometheus summary's objectives.
func SummaryObjectives(quantiles []string) (map[float64]float64, error) {
	out := make(map[float64]float64, len(quantiles))
	for _, q := range quantiles {
		qs, es, ok := strings.Cut(q, ":")
		quantile, qerr := strconv.ParseFloat(strings.TrimSpace(qs), 64)
		allowed, eerr := strconv.ParseFloat(strings.TrimSpace(es), 64)
		switch {
		case !ok || qerr != nil || eerr != nil:
			return nil, fmt.Errorf("read quantile %q: give quantile:error, such as 0.99:0.001", q)
		case quantile <= 0 || quantile >= 1:
			return nil, fmt.Errorf("read quantile %q: the quantile lies between 0 and 1, such as 0.99", q)
		case allowed < 0 || allowed >= quantile || allowed >= 1-quantile:
			return nil, fmt.Errorf("read quantile %q: the allowed error is at least 0 and less than the quantile's distance to 0 and to 1, such as 0.001 for 0.99", q)
		}
		if _, twice := out[quantile]; twice {
			return nil, fmt.Errorf("read quantile %q: %v is given twice", q, quantile)
		}
		out[quantile] = allowed
	}
	return out, nil
}
