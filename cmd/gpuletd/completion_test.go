package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A shell's completion asks the running daemon which models its repository
// holds, with each one's state; without a daemon it offers nothing, and
// never the files of the current folder.
func TestCompletionOffersTheDaemonsModels(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v2/repository/index" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`[{"name":"lenet5","version":"1","state":"READY"},{"name":"vgg19","state":"UNAVAILABLE","reason":"not loaded at start"}]`))
	}))
	defer srv.Close()
	dead := "http://" + freeAddr(t)
	models := []string{"lenet5\tready", "vgg19\tunavailable: not loaded at start"}
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"infer's model", []string{"infer", "--url", srv.URL, ""}, models},
		{"only one model", []string{"infer", "--url", srv.URL, "lenet5", ""}, nil},
		{"models show", []string{"models", "show", "--url", srv.URL, "le"}, models},
		{"models load", []string{"models", "load", "--url", srv.URL, ""}, models},
		{"models unload", []string{"models", "unload", "--url", srv.URL, ""}, models},
		{"load's list of models", []string{"load", "--url", srv.URL, "--model", "lenet5=100,v"},
			[]string{"lenet5=100,lenet5", "lenet5=100,vgg19"}}, // no descriptions after a comma (withListPrefix)
		{"trace set's model", []string{"trace", "set", "--url", srv.URL, "--model", ""}, models},
		{"events' model", []string{"events", "--url", srv.URL, "--model", ""}, models},
		{"events' model argument", []string{"events", "--url", srv.URL, ""}, models},
		{"load's models as arguments", []string{"load", "--url", srv.URL, "lenet5", ""}, models},
		{"events' severity", []string{"events", "--severity", ""}, []string{"debug", "info", "warning", "error"}},
		{"no daemon", []string{"infer", "--url", dead, ""}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, append([]string{"__complete"}, tt.args...)...)
			require.Equal(t, 0, code, stderr)
			lines := strings.Split(strings.TrimSpace(stdout), "\n")
			require.Equal(t, ":4", lines[len(lines)-1], "no file names: %s", stdout)
			var got []string
			if len(lines) > 1 {
				got = lines[:len(lines)-1]
			}
			require.Equal(t, tt.want, got)
		})
	}

	// plan's --rate completes up to the "=", without a space after it.
	for _, tc := range []struct {
		typed string
		want  string
	}{
		{"", "lenet5=\nvgg19=\n:6\n"},
		{"lenet5=100,v", "lenet5=100,lenet5=\nlenet5=100,vgg19=\n:6\n"},
		{"lenet5=1", ":6\n"},
	} {
		code, stdout, stderr := runCLI(t, "__complete", "plan", "--url", srv.URL, "--rate", tc.typed)
		require.Equal(t, 0, code, stderr)
		require.Equal(t, tc.want, stdout, tc.typed)
	}
	code, stdout, _ := runCLI(t, "__complete", "plan", "--algo", "")
	require.Equal(t, 0, code)
	require.True(t, strings.HasPrefix(stdout, "gpulet\ngpulet-int\nsbp\nideal\n:4\n"), stdout)

	code, stdout, _ = runCLI(t, "__complete", "events", "--kind", "plan,executor_r")
	require.Equal(t, 0, code)
	require.Contains(t, stdout, "plan,executor_restart\n", "the kinds the daemon records, after those given")
}
