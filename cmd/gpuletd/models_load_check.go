package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	neturl "net/url"
	"slices"
	"strings"
	"time"
)

// loadCheck is the daemon's answer to a load check (POST
// /api/v1/models/MODEL/check): what a load now would do.
type loadCheck struct {
	Name      string             `json:"name"`
	Verdict   string             `json:"verdict"`
	Status    int                `json:"status"`
	Error     string             `json:"error"`
	ServesNow bool               `json:"serves_now"`
	Reason    string             `json:"reason"`
	Versions  []loadCheckVersion `json:"versions"`
	Changes   []string           `json:"changes"`
	Displaced map[string]string  `json:"displaced"`
}

// loadCheckVersion is one version in a load check's answer.
type loadCheckVersion struct {
	Version      int      `json:"version"`
	SLOMS        float64  `json:"slo_ms"`
	SLOFrom      string   `json:"slo_from"`
	MaxBatchSize int      `json:"max_batch_size"`
	Profile      string   `json:"profile"`
	Unprofiled   string   `json:"unprofiled"`
	Note         string   `json:"note"`
	PlacedOn     []string `json:"placed_on"`
	Reason       string   `json:"reason"`
}

// dryRunLoad asks the daemon what a load of name with body would do,
// prints it (asJSON: the answer as it is), and fails (exit status 1) where
// the load would fail, leave the model or a pipeline unserved, or take
// gpu-lets from other models.
func dryRunLoad(ctx context.Context, w io.Writer, d *daemonAPI, name, token string, body []byte, asJSON bool) error {
	code, answer, msg, err := adminCall(ctx, d, http.MethodPost, "/api/v1/models/"+neturl.PathEscape(name)+"/check", token, body)
	if err != nil {
		return err
	}
	if code != http.StatusOK {
		return &exitError{code: 1, msg: "gpuletd: " + msg}
	}
	var c loadCheck
	if err := json.Unmarshal(answer, &c); err != nil {
		return fmt.Errorf("read the load check: %w", err)
	}
	if asJSON {
		fmt.Fprintln(w, strings.TrimSpace(string(answer)))
	} else {
		printLoadCheck(w, c)
	}
	if c.Verdict == "refused" || c.Verdict == "unplaced" || c.Verdict == "steps_not_served" || len(c.Displaced) > 0 {
		return &exitError{code: 1}
	}
	return nil
}

// printLoadCheck prints a load check: the verdict in a line, what changes
// of what serves, the versions with where the plan puts them, and the
// other models it would leave short.
func printLoadCheck(w io.Writer, c loadCheck) {
	const dry = " (dry run: nothing was changed)"
	switch c.Verdict {
	case "refused":
		fmt.Fprintf(w, "%s: a load now would fail (%d): %s%s\n", c.Name, c.Status, c.Error, dry)
		return
	case "serves":
		fmt.Fprintf(w, "%s: a load now would serve it%s\n", c.Name, dry)
	case "measured_first":
		fmt.Fprintf(w, "%s: a load now would measure it first, then place it%s\n", c.Name, dry)
	case "unplaced":
		fmt.Fprintf(w, "%s: a load now would go through, but the plan would place it on no gpu-let%s\n", c.Name, dry)
	case "pipeline":
		fmt.Fprintf(w, "%s: a load now would serve this pipeline; its plan is made from its steps' as it loads%s\n", c.Name, dry)
	case "steps_not_served":
		fmt.Fprintf(w, "%s: a load now would go through, but the pipeline would not serve: %s%s\n", c.Name, c.Reason, dry)
	default:
		fmt.Fprintf(w, "%s: %s%s\n", c.Name, c.Verdict, dry)
	}
	switch {
	case c.ServesNow && len(c.Changes) == 0:
		fmt.Fprintln(w, "changes: none; it serves as its folder reads now")
	case len(c.Changes) > 0:
		fmt.Fprintln(w, "changes:")
		writeChangeLines(w, c.Changes)
	}
	if len(c.Versions) > 0 {
		tw := newTable(w)
		fmt.Fprintln(tw, "VERSION\tSLO\tMAX BATCH\tPROFILE\tPLACED ON (at today's rates)")
		for _, v := range c.Versions {
			slo := fmt.Sprint(time.Duration(v.SLOMS * float64(time.Millisecond)))
			if v.SLOFrom != "" {
				slo += " (" + v.SLOFrom + ")"
			}
			placed := strings.Join(v.PlacedOn, ", ")
			switch {
			case v.Unprofiled != "":
				placed = "- (measured first)"
			case placed == "":
				placed = "-"
			}
			fmt.Fprintf(tw, "%d\t%s\t%d\t%s\t%s\n", v.Version, slo, v.MaxBatchSize, v.Profile, placed)
		}
		_ = tw.Flush()
		for _, v := range c.Versions {
			for _, line := range []string{v.Unprofiled, v.Note, v.Reason} {
				if line != "" {
					fmt.Fprintf(w, "version %d: %s\n", v.Version, line)
				}
			}
		}
	}
	for _, m := range slices.Sorted(maps.Keys(c.Displaced)) {
		fmt.Fprintf(w, "%s would lose gpu-lets: %s\n", m, c.Displaced[m])
	}
}
