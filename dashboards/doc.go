// Package dashboards holds a Grafana dashboard for gpuletd nodes
// (gpuletd.json: models and their SLOs, gpu-lets, devices, limits, events
// and pipelines, from the daemon's /metrics). Its Go tests check the
// dashboard's layout, run promtool on every query in it, check that every
// metric it reads is one gpuletd documents, and cmd/gpuletd's end-to-end
// test runs each query in a real Prometheus scraping a real daemon.
// Operators import the file in Grafana.
package dashboards

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"regexp"

	"github.com/gpulet/gpuletd/internal/promnames"
)

// Grafana is gpuletd.json.
//
//go:embed gpuletd.json
var Grafana []byte

// Query is one PromQL expression of the dashboard.
type Query struct {
	// Where names it: `panel "Latency" B`, `annotation "Plan changes"`,
	// `variable model`.
	Where string
	// Expr is the expression with Grafana's variables replaced.
	Expr string
}

// dashboard is the part of Grafana's dashboard model the queries are in.
type dashboard struct {
	Panels []struct {
		Type    string `json:"type"`
		Title   string `json:"title"`
		Targets []struct {
			RefID string `json:"refId"`
			Expr  string `json:"expr"`
		} `json:"targets"`
	} `json:"panels"`
	Annotations struct {
		List []struct {
			Name string `json:"name"`
			Expr string `json:"expr"`
		} `json:"list"`
	} `json:"annotations"`
	Templating struct {
		List []struct {
			Type       string `json:"type"`
			Name       string `json:"name"`
			Definition string `json:"definition"`
		} `json:"list"`
	} `json:"templating"`
}

// variable matches a Grafana variable in an expression: $name or ${name}.
var variable = regexp.MustCompile(`\$\{?(\w+)\}?`)

// labelValues matches Grafana's label_values(selector, label) query of a
// variable.
var labelValues = regexp.MustCompile(`^label_values\((.+),\s*\w+\)$`)

// Queries lists every PromQL expression of the dashboard, its panels'
// targets, its annotations' and the selectors of its variables'
// label_values queries, with each Grafana variable replaced by vars
// ("$instance" by vars["instance"], "$__rate_interval" by
// vars["__rate_interval"]); a variable vars lacks is an error.
func Queries(vars map[string]string) ([]Query, error) {
	var d dashboard
	if err := json.Unmarshal(Grafana, &d); err != nil {
		return nil, fmt.Errorf("read dashboard: %w", err)
	}
	var out []Query
	var missing error
	add := func(where, expr string) {
		expr = variable.ReplaceAllStringFunc(expr, func(v string) string {
			name := variable.FindStringSubmatch(v)[1]
			value, ok := vars[name]
			if !ok && missing == nil {
				missing = fmt.Errorf("%s: no value for variable %s", where, v)
			}
			return value
		})
		out = append(out, Query{Where: where, Expr: expr})
	}
	for _, p := range d.Panels {
		for _, t := range p.Targets {
			add(fmt.Sprintf("panel %q %s", p.Title, t.RefID), t.Expr)
		}
	}
	for _, a := range d.Annotations.List {
		if a.Expr != "" {
			add(fmt.Sprintf("annotation %q", a.Name), a.Expr)
		}
	}
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		sub := labelValues.FindStringSubmatch(v.Definition)
		if sub == nil {
			return nil, fmt.Errorf("variable %s: %q is not label_values(selector, label)", v.Name, v.Definition)
		}
		add("variable "+v.Name, sub[1])
	}
	return out, missing
}

// Metrics lists the gpuletd metric families the dashboard reads, sorted; a
// histogram's series by its family's name.
func Metrics() []string { return promnames.Families(Grafana) }
