package refset

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/gpulet/gpuletd/gpulet"
	"github.com/gpulet/gpuletd/gpulet/migrules"
)

// SegmentPoint is one measured configuration of a MIG instance running
// identical MPS processes of one model (ParvaGPU's "GPU segment"): Procs
// processes, each running batches of Batch, side by side on an instance of
// GPCs compute slices. Throughput is one process's inferences per second;
// LatencyMS is one batch's time.
type SegmentPoint struct {
	Model      string
	GPCs       int
	Batch      int
	Procs      int
	Throughput float64
	LatencyMS  float64
}

// parvaHeader is the header of ParvaGPU's profile files.
var parvaHeader = []string{"Mig instance", "Batch size", "Workload Number", "Throughput", "Latency"}

// maxProcs bounds the processes of one segment the parser accepts.
const maxProcs = 16

// ParseParvaGPU reads ParvaGPU's profiles (ParvaGPU_SC24 prof_data/: one
// <model>.csv per model, in the alphabetical order its scenarios' columns
// follow) into a Source with the metadata of the named set. A row of
// zeros was not measured or did not fit in memory and is left out; every
// other row becomes a segment record. Errors wrap ErrFormat and name the
// file, the line and the problem.
func ParseParvaGPU(fsys fs.FS, set string) (*Source, error) {
	meta, ok := catalog[set]
	if !ok || meta.Partitioning != PartitionMIG {
		return nil, fmt.Errorf("parse ParvaGPU profiles for %q: %w", set, ErrUnknownSet)
	}
	files, err := fs.Glob(fsys, "*.csv")
	if err != nil {
		return nil, fmt.Errorf("parse ParvaGPU profiles: %w", err)
	}
	slices.Sort(files)
	src := &Source{Meta: meta}
	for _, f := range files {
		label := strings.TrimSuffix(path.Base(f), ".csv")
		name := canonicalName(label)
		src.Models = append(src.Models, ModelName{Name: name, Label: label})
		if err := parseParvaFile(fsys, f, name, src); err != nil {
			return nil, err
		}
	}
	if want := expectedModels[set]; len(src.Models) != want {
		return nil, formatErr(set, 0, "%d model files, want %d (truncated copy?)", len(src.Models), want)
	}
	return src, nil
}

func parseParvaFile(fsys fs.FS, file, model string, src *Source) error {
	f, err := fsys.Open(file)
	if err != nil {
		return fmt.Errorf("parse ParvaGPU profiles: %w", err)
	}
	defer f.Close()
	cr := csv.NewReader(f)
	cr.FieldsPerRecord = len(parvaHeader)
	header, err := cr.Read()
	if err != nil {
		return csvErr(file, err, "header")
	}
	for i := range header {
		if strings.TrimSpace(header[i]) != parvaHeader[i] {
			return formatErr(file, 1, "header is %q, want %q", strings.Join(header, ","), strings.Join(parvaHeader, ","))
		}
	}
	seen := map[[3]int]bool{}
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return csvErr(file, err, "row")
		}
		line, _ := cr.FieldPos(0)
		var v [3]int
		for i, lim := range []int{7, 1 << 16, maxProcs} {
			n, err := strconv.Atoi(strings.TrimSpace(rec[i]))
			if err != nil || n < 1 || n > lim {
				return formatErr(file, line, "%s %q is not an integer in 1..%d", parvaHeader[i], rec[i], lim)
			}
			v[i] = n
		}
		if _, err := segmentSize(v[0]); err != nil {
			return formatErr(file, line, "%s %d is no MIG instance size: %v", parvaHeader[0], v[0], err)
		}
		if seen[v] {
			return formatErr(file, line, "instance %d, batch %d, %d processes given twice", v[0], v[1], v[2])
		}
		seen[v] = true
		var tp, lat float64
		for i, dst := range []*float64{&tp, &lat} {
			x, err := strconv.ParseFloat(strings.TrimSpace(rec[3+i]), 64)
			if err != nil || !(x >= 0) || x > maxMS {
				return formatErr(file, line, "%s %q is not a number ≥ 0", parvaHeader[3+i], rec[3+i])
			}
			*dst = x
		}
		switch {
		case tp == 0 && lat == 0:
			continue // not measured, or out of memory
		case tp == 0 || lat == 0:
			return formatErr(file, line, "throughput %v with latency %v: both or neither must be 0", tp, lat)
		}
		src.Segments = append(src.Segments, SegmentPoint{Model: model, GPCs: v[0], Batch: v[1], Procs: v[2], Throughput: tp, LatencyMS: lat * 1000})
	}
}

// segmentSize is the gpu-let size, percent, of a MIG instance of gpcs
// compute slices on the A100 the profiles were measured on.
func segmentSize(gpcs int) (int, error) {
	t, err := migrules.Lookup(migrules.A100_80GB)
	if err != nil {
		return 0, err
	}
	size := migrules.SizePercent(gpcs, t.ComputeSlices)
	if _, err := t.ProfileForSize(size); err != nil {
		return 0, err
	}
	return size, nil
}

// migTables names the MIG table of each PartitionMIG set's GPU.
var migTables = map[string]string{SetParvaGPUA100: migrules.A100_80GB}

// segmentPoints turns one model's segments into profile points: a gpu-let
// of a MIG instance's size that runs a batch of B as Procs processes side
// by side, each taking a part of it. How the measurements map:
//
//   - A segment of n processes each running batches of b serves n·b
//     requests per batch time, so it is the point (B = n·b, size of the
//     instance) with Procs n.
//   - The batch time is b / throughput of one process: the file's latency
//     column is rounded to whole milliseconds (0.012 s), while throughput
//     has five significant digits, and the two agree to within 1% wherever
//     the latency is 50 ms or more.
//   - Where several segments give the same B, the fastest counts; a point
//     that a larger B beats (no longer, more requests) is left out, since
//     that segment serves B as well with some processes running less. The
//     points left are strictly increasing in both B and time, so the
//     profile's interpolation between them is monotone. Where even a batch
//     of one is served fastest by a larger segment, a point at B = 1 with
//     that segment's time stands for it.
//   - Memory: only configurations that were measured (fitted in memory)
//     are used.
func segmentPoints(segs []SegmentPoint) ([]gpulet.Point, error) {
	type cand struct {
		b, procs int
		ms       float64
	}
	bySize := map[int]map[int]cand{}
	for _, g := range segs {
		size, err := segmentSize(g.GPCs)
		if err != nil {
			return nil, err
		}
		c := cand{b: g.Procs * g.Batch, procs: g.Procs, ms: 1000 * float64(g.Batch) / g.Throughput}
		if bySize[size] == nil {
			bySize[size] = map[int]cand{}
		}
		if old, ok := bySize[size][c.b]; !ok || c.ms < old.ms || (c.ms == old.ms && c.procs < old.procs) {
			bySize[size][c.b] = c
		}
	}
	var out []gpulet.Point
	for _, size := range slices.Sorted(maps.Keys(bySize)) {
		cs := slices.Collect(maps.Values(bySize[size]))
		slices.SortFunc(cs, func(a, b cand) int { return b.b - a.b })
		var keep []cand
		for _, c := range cs {
			if len(keep) == 0 || c.ms < keep[len(keep)-1].ms {
				keep = append(keep, c)
			}
		}
		if first := keep[len(keep)-1]; first.b > 1 {
			// Even one request is served fastest by a larger segment.
			keep = append(keep, cand{b: 1, procs: first.procs, ms: first.ms})
		}
		for i := len(keep) - 1; i >= 0; i-- {
			c := keep[i]
			out = append(out, gpulet.Point{Batch: c.b, Size: size, P50MS: c.ms, Procs: c.procs, Util: gpulet.UnknownUtil()})
		}
	}
	return out, nil
}
