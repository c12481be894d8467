package refset

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// lokiBatches are the batch sizes Loki profiled every variant at.
var lokiBatches = []int{1, 2, 4, 8, 16, 32, 64}

// lokiLabel renames Loki's checkpoint names to the variants' family names:
// "eb3_checkpoint_150epochs" is EfficientNet-B3 fine-tuned for car
// classification (Loki's traffic-analysis pipeline).
func lokiLabel(raw string) string {
	if rest, ok := strings.CutPrefix(raw, "eb"); ok {
		if k, _, ok := strings.Cut(rest, "_"); ok && len(k) == 1 && k[0] >= '0' && k[0] <= '9' {
			return "efficientnet-b" + k
		}
	}
	return raw
}

// ParseLokiRuntimes reads Loki's profiled runtimes (loki/runtimes-1080ti.csv
// in the shared data folder: columns model, batch_size and
// 50th_pct_runtime in seconds, one row per model and batch on a whole GTX
// 1080 Ti) into a Source of whole-GPU points, the median taken as the
// latency. Every model must have every batch of lokiBatches. Errors wrap
// ErrFormat and name the file, the line and the problem.
func ParseLokiRuntimes(r io.Reader, set string) (*Source, error) {
	meta, ok := catalog[set]
	if !ok || meta.Partitioning != PartitionNone {
		return nil, fmt.Errorf("parse loki runtimes for %q: %w", set, ErrUnknownSet)
	}
	file := inputName(r, set+" runtimes")
	cr := csv.NewReader(r)
	col, err := csvColumns(cr, file, "model", "batch_size", "50th_pct_runtime")
	if err != nil {
		return nil, err
	}
	src := &Source{Meta: meta}
	seen := map[string]map[int]bool{}
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, csvErr(file, err, "row")
		}
		line, _ := cr.FieldPos(0)
		label := lokiLabel(strings.TrimSpace(rec[col["model"]]))
		name := canonicalName(label)
		if name == "" {
			return nil, formatErr(file, line, "empty model name")
		}
		b, err := strconv.Atoi(strings.TrimSpace(rec[col["batch_size"]]))
		if err != nil || !slices.Contains(lokiBatches, b) {
			return nil, formatErr(file, line, "model %s: batch size %q is not one of %v", label, rec[col["batch_size"]], lokiBatches)
		}
		raw := strings.TrimSpace(rec[col["50th_pct_runtime"]])
		sec, err := strconv.ParseFloat(raw, 64)
		if err != nil || math.IsNaN(sec) || sec <= 0 || sec*1000 > maxMS {
			return nil, formatErr(file, line, "model %s batch %d: runtime %q is not a positive number of seconds", label, b, raw)
		}
		if seen[name] == nil {
			seen[name] = map[int]bool{}
			src.Models = append(src.Models, ModelName{Name: name, Label: label})
		}
		if seen[name][b] {
			return nil, formatErr(file, line, "model %s batch %d given twice", label, b)
		}
		seen[name][b] = true
		src.Points = append(src.Points, SourcePoint{Model: name, Batch: b, Size: 100, LatencyMS: sec * 1000, L2: math.NaN(), DRAM: math.NaN()})
	}
	line, _ := cr.FieldPos(0)
	for _, m := range src.Models {
		if len(seen[m.Name]) != len(lokiBatches) {
			return nil, formatErr(file, line, "model %s has %d of the %d batch sizes (truncated file?)", m.Label, len(seen[m.Name]), len(lokiBatches))
		}
	}
	if want := expectedModels[set]; len(src.Models) != want {
		return nil, formatErr(file, line, "%d models, the profiled table has %d (truncated or altered file?)", len(src.Models), want)
	}
	return src, nil
}
