package main

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// What a command names with a flag may come as its argument, where a new
// user first puts it (`gpuletd load lenet5`, as `gpuletd infer lenet5`);
// where no argument fits, the refusal says what was likely meant. Each of
// these answered `unknown command "lenet5" for "gpuletd load"` before.
func TestArgumentsWhereUsersPutThem(t *testing.T) {
	var mu sync.Mutex
	var asked []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		asked = append(asked, r.URL.Path+"?"+r.URL.RawQuery)
		mu.Unlock()
		http.Error(w, `{"error":"not here"}`, http.StatusNotFound)
	}))
	defer srv.Close()
	wl := filepath.Join("..", "..", "sim", "workload", "testdata", "example.yaml")

	tests := []struct {
		name string
		args []string
		code int
		out  string // in stdout (code 0) or stderr
		ask  string // in a request the daemon got
	}{
		{"plan FILE", []string{"plan", wl}, 0, "plan (gpulet-int): schedulable", ""},
		{"simulate FILE", []string{"simulate", wl, "--duration", "2s"}, 0, "goodput", ""},
		{"simulate, two files", []string{"simulate", wl, wl}, 2, "simulate takes at most 1 argument (the --workload), not 2", ""},
		{"simulate FILE --workload FILE", []string{"simulate", wl, "--workload", wl}, 2, "simulate: " + wl + " and --workload " + wl + " name the same thing: give one of them", ""},
		{"simulate, no file", []string{"simulate"}, 2, "simulate needs a workload file: gpuletd simulate FILE", ""},
		// Every model's statistics are read before the run, in order; its
		// metadata then in parallel, the first refusal cancelling the rest.
		{"load MODEL MODEL=RATE", []string{"load", "lenet5=10", "mlp=20", "--url", srv.URL, "--duration", "1s"}, 1, "", "/v2/models/mlp/stats?"},
		{"load MODEL --model MODEL", []string{"load", "lenet5", "--model", "mlp", "--rate", "20", "--url", srv.URL, "--duration", "1s"}, 1, "", "/v2/models/lenet5/"},
		{"load, no model", []string{"load", "--url", srv.URL}, 2, "load needs a model: gpuletd load MODEL", ""},
		{"events MODEL", []string{"events", "lenet5", "--url", srv.URL}, 1, "", "model=lenet5"},
		{"events MODEL --model MODEL", []string{"events", "lenet5", "--model", "mlp"}, 2, "events: lenet5 and --model mlp name the same thing", ""},
		{"status MODEL", []string{"status", "lenet5"}, 2, `status takes no arguments, not "lenet5": for one model: gpuletd models show lenet5`, ""},
		{"trace MODEL", []string{"trace", "lenet5"}, 2, "for one model's settings: gpuletd trace --model lenet5", ""},
		{"trace, a misspelt subcommand", []string{"trace", "sumary"}, 2, "did you mean gpuletd trace summary?", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mu.Lock()
			asked = nil
			mu.Unlock()
			code, stdout, stderr := runCLI(t, tt.args...)
			require.Equal(t, tt.code, code, stderr)
			if tt.code == 0 {
				require.Contains(t, stdout, tt.out)
			} else {
				require.Contains(t, stderr, tt.out)
				require.NotContains(t, stderr, "unknown command")
			}
			if tt.ask != "" {
				mu.Lock()
				defer mu.Unlock()
				found := false
				for _, a := range asked {
					found = found || strings.Contains(a, tt.ask)
				}
				require.True(t, found, "asked %v", asked)
			}
		})
	}
}
