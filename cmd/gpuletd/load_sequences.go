package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/gpulet/gpuletd/sim/loadgen"
	"github.com/spf13/cobra"
)

// sequenceFlags are perf_analyzer's flags that shape a stateful model's
// sequences beyond their number and length: how much their lengths vary,
// and the range their IDs come from.
type sequenceFlags struct {
	variation float64 // --sequence-length-variation, percent
	idRange   string  // --sequence-id-range START[:END]
	serial    bool    // --serial-sequences
}

// register adds the flags to cmd.
func (s *sequenceFlags) register(cmd *cobra.Command) {
	f := cmd.Flags()
	f.Float64Var(&s.variation, "sequence-length-variation", 0, "draw each sequence's length within this percentage of --sequence-length either side, as perf_analyzer's (whose default is 20; gpuletd load's, 0, sends every sequence at the length)")
	f.StringVar(&s.idRange, "sequence-id-range", "", "START[:END], the sequence IDs used, as perf_analyzer's: from START, and below END (excluded) from START again, never one still live (default from 1, without end)")
	f.BoolVar(&s.serial, "serial-sequences", false, "as perf_analyzer's: a sequence has one request in flight at a time, which gpuletd load always keeps")
}

// apply sets cfg's sequence fields from the flags.
func (s *sequenceFlags) apply(cmd *cobra.Command, cfg *loadgen.Config) error {
	f := cmd.Flags()
	if f.Changed("sequence-length-variation") {
		if s.variation < 0 || s.variation > 100 {
			return usageErrorf("load: --sequence-length-variation %g: give a percentage from 0 to 100", s.variation)
		}
		cfg.SequenceLengthVariation = s.variation / 100
	}
	if !f.Changed("sequence-id-range") {
		return nil
	}
	start, end, ranged := strings.Cut(s.idRange, ":")
	from, err := strconv.ParseUint(strings.TrimSpace(start), 10, 64)
	if err != nil {
		return usageErrorf("load: --sequence-id-range %q: give START or START:END, whole numbers", s.idRange)
	}
	cfg.SequenceIDStart = from
	if ranged {
		to, err := strconv.ParseUint(strings.TrimSpace(end), 10, 64)
		if err != nil || to <= max(from, 1) {
			return usageErrorf("load: --sequence-id-range %q: give an END above START (END is excluded)", s.idRange)
		}
		cfg.SequenceIDEnd = to
	}
	return nil
}

// sequenceNotes is what the report's sequences line adds of r's variation
// and ID range: "" when neither was asked for.
func sequenceNotes(r *loadgen.Report) string {
	var notes []string
	if v := r.SequenceLengthVariation; v > 0 {
		notes = append(notes, fmt.Sprintf("±%g%%", 100*v))
	}
	switch {
	case r.SequenceIDEnd > 0:
		notes = append(notes, fmt.Sprintf("IDs %d to %d", max(r.SequenceIDStart, 1), r.SequenceIDEnd-1))
	case r.SequenceIDStart > 1:
		notes = append(notes, fmt.Sprintf("IDs from %d", r.SequenceIDStart))
	}
	if len(notes) == 0 {
		return ""
	}
	return " (" + strings.Join(notes, ", ") + ")"
}
