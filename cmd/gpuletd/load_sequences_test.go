package main

import (
	"testing"

	"github.com/gpulet/gpuletd/sim/loadgen"
	"github.com/spf13/cobra"
	"github.com/stretchr/testify/require"
)

// TestSequenceFlags: perf_analyzer's --sequence-length-variation and
// --sequence-id-range set the run's sequences, and a value gpuletd cannot
// use is refused.
func TestSequenceFlags(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want loadgen.Config
		note string
		err  string
	}{
		{name: "none", args: nil},
		{name: "a variation", args: []string{"--sequence-length-variation", "20"}, want: loadgen.Config{SequenceLengthVariation: 0.2}, note: " (±20%)"},
		{name: "IDs from", args: []string{"--sequence-id-range", "100"}, want: loadgen.Config{SequenceIDStart: 100}, note: " (IDs from 100)"},
		{name: "IDs within", args: []string{"--sequence-id-range", "1:65"}, want: loadgen.Config{SequenceIDStart: 1, SequenceIDEnd: 65}, note: " (IDs 1 to 64)"},
		{name: "both", args: []string{"--sequence-id-range", "0:9", "--sequence-length-variation", "50", "--serial-sequences"},
			want: loadgen.Config{SequenceLengthVariation: 0.5, SequenceIDEnd: 9}, note: " (±50%, IDs 1 to 8)"},
		{name: "too much variation", args: []string{"--sequence-length-variation", "120"}, err: "--sequence-length-variation 120: give a percentage from 0 to 100"},
		{name: "not a number", args: []string{"--sequence-id-range", "a:b"}, err: `--sequence-id-range "a:b": give START or START:END`},
		{name: "an end below the start", args: []string{"--sequence-id-range", "10:5"}, err: `--sequence-id-range "10:5": give an END above START`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var sf sequenceFlags
			cmd := &cobra.Command{Use: "load"}
			sf.register(cmd)
			require.NoError(t, cmd.Flags().Parse(tc.args))
			var cfg loadgen.Config
			err := sf.apply(cmd, &cfg)
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, cfg)
			r := &loadgen.Report{SequenceLengthVariation: cfg.SequenceLengthVariation, SequenceIDStart: cfg.SequenceIDStart, SequenceIDEnd: cfg.SequenceIDEnd}
			require.Equal(t, tc.note, sequenceNotes(r))
		})
	}
}
