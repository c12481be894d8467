package main

import (
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/require"
)

// TestDeprecatedPerfAnalyzerFlags: perf_analyzer's older -t N and -d -c N
// set --concurrency and --concurrency-range, and what perf_analyzer refuses
// beside them is refused.
func TestDeprecatedPerfAnalyzerFlags(t *testing.T) {
	for _, tc := range []struct {
		name        string
		args        []string
		concurrency string
		search      string
		err         string
	}{
		{name: "none", concurrency: "1"},
		{name: "-t", args: []string{"-t", "4"}, concurrency: "4"},
		{name: "-d -c", args: []string{"-d", "-c", "8"}, concurrency: "1", search: "1:8"},
		{name: "-t and -d", args: []string{"-t", "4", "-d", "-c", "8"}, err: "-t is one concurrency and -d -c N a search of them"},
		{name: "-t 0", args: []string{"-t", "0"}, err: "-t 0: give 1 or more"},
		{name: "-t and --concurrency", args: []string{"-t", "2", "--concurrency", "3"}, err: "-t is --concurrency"},
		{name: "-t and a range", args: []string{"-t", "2", "--concurrency-range", "1:3"}, err: "-t is --concurrency"},
		{name: "-d alone", args: []string{"-d"}, err: "-d searches the concurrencies up to -c N: give both"},
		{name: "-c alone", args: []string{"-c", "4"}, err: "-d searches the concurrencies up to -c N: give both"},
		{name: "-c 0", args: []string{"-d", "-c", "0"}, err: "-c 0: give 1 or more"},
		{name: "-d -c and a range", args: []string{"-d", "-c", "4", "--concurrency-range", "1:3"}, err: "-d -c 4 is --concurrency-range 1:4: give one"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var d deprecatedPerfAnalyzerFlags
			cmd := &cobra.Command{Use: "load"}
			f := cmd.Flags()
			f.Int("concurrency", 1, "")
			f.String("concurrency-range", "", "")
			d.register(cmd)
			require.NoError(t, f.Parse(tc.args))
			err := d.apply(f)
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.concurrency, f.Lookup("concurrency").Value.String())
			require.Equal(t, tc.search, f.Lookup("concurrency-range").Value.String())
		})
	}
}
