package main

import (
	"fmt"
	"io"
	"strings"
)

// adminPipeline is one pipeline of the status.
type adminPipeline struct {
	Name   string   `json:"name"`
	SLOMS  float64  `json:"slo_ms"`
	Steps  []string `json:"steps"`
	Places []string `json:"places"`
	Beside []bool   `json:"beside"`
	Fanout string   `json:"fanout"`
	// FanoutRows is the mean rows of the fan-out in recent requests.
	FanoutRows float64 `json:"fanout_rows"`
	Ready      bool    `json:"ready"`
	Reason     string  `json:"reason"`
	// Warnings say what keeps it from serving its requests; ConfigNotes
	// which configured fields took no effect, and which steps run a
	// pipeline of their own.
	Warnings    []string    `json:"warnings"`
	ConfigNotes []string    `json:"config_notes"`
	Rate        float64     `json:"rate"`
	Recent      adminRecent `json:"recent"`
	// Scaling is the pipeline's accuracy scaling.
	Scaling struct {
		Scaling  string  `json:"scaling"`
		Planned  float64 `json:"planned_accuracy"`
		Accuracy float64 `json:"accuracy"`
		Served   int64   `json:"served"`
		Mix      [][]struct {
			Model string  `json:"model"`
			Share float64 `json:"share"`
		} `json:"mix"`
	} `json:"scaling"`
	Cache *adminCache `json:"response_cache"`
}

// stepsText is a pipeline's steps in order, its fan-out named.
func (p adminPipeline) stepsText() string {
	steps := chainText(p.Steps, p.Beside)
	switch {
	case p.Fanout != "" && p.FanoutRows > 0:
		steps += fmt.Sprintf(" (fan-out: %s, %.1f rows a request)", p.Fanout, p.FanoutRows)
	case p.Fanout != "":
		steps += " (fan-out: " + p.Fanout + ")"
	}
	return steps
}

// accuracyText is the accuracy a pipeline serves at and its scaling mode.
func (p adminPipeline) accuracyText() string {
	sc := p.Scaling
	if sc.Served == 0 {
		if sc.Scaling == "" {
			return "-"
		}
		return "- (" + sc.Scaling + ")"
	}
	s := fmt.Sprintf("%.1f%%", 100*sc.Accuracy)
	if sc.Scaling != "" {
		s += " (" + sc.Scaling + ")"
	}
	return s
}

// mixText is a pipeline's variant mix where some step runs more than one
// model: "step[1]: a 60% + b 40%", each step named by its place as
// written (by its place in the run order from a daemon that does not give
// them); "" otherwise.
func (p adminPipeline) mixText() string {
	var parts []string
	for i, step := range p.Scaling.Mix {
		if len(step) < 2 && (len(step) == 0 || i >= len(p.Steps) || step[0].Model == p.Steps[i]) {
			continue
		}
		var vs []string
		for _, v := range step {
			vs = append(vs, fmt.Sprintf("%s %.0f%%", v.Model, 100*v.Share))
		}
		place := fmt.Sprintf("step[%d]", i)
		if i < len(p.Places) {
			place = p.Places[i]
		}
		parts = append(parts, place+": "+strings.Join(vs, " + "))
	}
	return strings.Join(parts, ", ")
}

// writePipelines prints the pipelines table and why those that cannot run
// cannot.
func writePipelines(w io.Writer, ps []adminPipeline) error {
	tw := newTable(w)
	fmt.Fprintln(tw, "PIPELINE\tSTEPS\tSLO\tRATE\tACCURACY\tATTAIN\tP50\tP99")
	for _, p := range ps {
		attain, p50, p99 := p.Recent.texts()
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", p.Name, p.stepsText(), sloText(p.SLOMS), perSecond(p.Rate), p.accuracyText(), attain, p50, p99)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	// A reason of several problems (each on a line of its own) keeps them
	// under the pipeline's name.
	under := func(s string) string { return strings.ReplaceAll(s, "\n", "\n  ") }
	for _, p := range ps {
		if !p.Ready && p.Reason != "" {
			writeWrappedLine(w, p.Name+": not served: "+under(p.Reason))
		}
		for _, warning := range p.Warnings {
			if p.Ready || warning != p.Reason {
				writeWrappedLine(w, p.Name+": warning: "+under(warning))
			}
		}
		if mix := p.mixText(); mix != "" {
			fmt.Fprintf(w, "%s: runs cheaper variants: %s\n", p.Name, mix)
		}
		if c := p.Cache; c != nil {
			fmt.Fprintf(w, "%s: response cache: %s\n", p.Name, c.text())
		}
	}
	return nil
}

// chainText is steps in the order they run, "a -> b", a step that runs at
// once with the one before it (beside) joined by " + ": "a + b -> c".
func chainText(steps []string, beside []bool) string {
	var b strings.Builder
	for i, s := range steps {
		switch {
		case i == 0:
		case i < len(beside) && beside[i]:
			b.WriteString(" + ")
		default:
			b.WriteString(" -> ")
		}
		b.WriteString(s)
	}
	return b.String()
}
