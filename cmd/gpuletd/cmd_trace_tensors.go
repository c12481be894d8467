package main

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
)

// maxTensorValues is how many of a traced tensor's values writeTraceTensors
// prints.
const maxTensorValues = 8

// writeTraceTensors prints the tensors traced at level TENSORS, trace by
// trace in the files' order: each trace's model and id, then a line per
// tensor it brought (in) or was answered with (out), its first values; a
// pipeline's step requests follow it, indented, in the order they were sent
// (their traces' ids), not the order they ended.
func writeTraceTensors(w io.Writer, recs []traceRecord) error {
	byID := map[uint64]*traceRecord{}
	tensors := map[uint64][]*traceRecord{}
	children := map[uint64][]uint64{}
	var order []uint64
	for i := range recs {
		r := &recs[i]
		if r.Activity != "" {
			tensors[r.ID] = append(tensors[r.ID], r)
			continue
		}
		if _, seen := byID[r.ID]; seen {
			continue
		}
		byID[r.ID] = r
		if r.ParentID != 0 {
			children[r.ParentID] = append(children[r.ParentID], r.ID)
		} else {
			order = append(order, r.ID)
		}
	}
	if len(tensors) == 0 {
		return errors.New("trace summary: the files hold no tensors (trace_level TENSORS)")
	}
	var write func(id uint64, indent string)
	write = func(id uint64, indent string) {
		r := byID[id]
		fmt.Fprintf(w, "%strace %d: %s (version %d)", indent, id, r.Model, r.Version)
		if r.Error != "" {
			fmt.Fprintf(w, ", failed: %s", r.Error)
		}
		fmt.Fprintln(w)
		for _, t := range tensors[id] {
			dir := "in "
			if t.Activity != "TENSOR_QUEUE_INPUT" {
				dir = "out"
			}
			fmt.Fprintf(w, "%s  %s %s %s [%s]: %s\n", indent, dir, t.Tensor.Name, t.Tensor.DType, t.Tensor.Shape, firstValues(t.Tensor.Data))
		}
		for _, c := range slices.Sorted(slices.Values(children[id])) { // in the order they were sent
			write(c, indent+"  ")
		}
	}
	for _, id := range order {
		write(id, "")
	}
	for _, id := range slices.Sorted(maps.Keys(children)) { // steps whose pipeline's trace is in another file
		if _, ok := byID[id]; !ok {
			for _, c := range children[id] {
				write(c, "")
			}
		}
	}
	return nil
}

// firstValues is a traced tensor's first values and how many it has.
func firstValues(data string) string {
	if data == "" {
		return "(no values)"
	}
	vals := strings.Split(data, ",")
	if len(vals) <= maxTensorValues {
		return data
	}
	return fmt.Sprintf("%s, … (%d values)", strings.Join(vals[:maxTensorValues], ","), len(vals))
}
