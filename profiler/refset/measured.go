package refset

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"
)

// A measured set's origin is the JSON-lines file scripts/gpu/dump-campaign.py
// writes from a GPU campaign (scripts/gpu/campaign.sh), kept in this
// package's measured/ folder. Its records, each with "kind":
//
//	meta      what was measured, on what and when (free-form strings)
//	point     model size batch p50_ms p99_ms samples complete
//	util      model size batch metric (sm|l2|dram) value (percent or null) source
//	pair      model_a size_a batch_a solo_a_ms coloc_a_ms, the same for b
//	executor  model size sm_count start_ms load_ms warmup_ms
//
// A point's latency is its p50 engine time per batch. Its L2 and DRAM
// utilisation are the util records at the same (model, size, batch), from
// whichever meter the store kept (Nsight Compute on the whole GPU, NVML GPM
// under MPS); "-" where none was measured. A pair's co-located latencies
// are p50s, with no spread recorded (std 0). Executor records are not part
// of a set; docs/BENCHMARKS.md reports them.
type measuredRecord struct {
	Kind   string   `json:"kind"`
	Model  string   `json:"model"`
	Size   int      `json:"size"`
	Batch  int      `json:"batch"`
	P50MS  float64  `json:"p50_ms"`
	Metric string   `json:"metric"`
	Value  *float64 `json:"value"`
	ModelA string   `json:"model_a"`
	SizeA  int      `json:"size_a"`
	BatchA int      `json:"batch_a"`
	ColocA float64  `json:"coloc_a_ms"`
	ModelB string   `json:"model_b"`
	SizeB  int      `json:"size_b"`
	BatchB int      `json:"batch_b"`
	ColocB float64  `json:"coloc_b_ms"`
}

// ParseMeasured reads a campaign's measurements for the named set.
func ParseMeasured(r io.Reader, set string) (*Source, error) {
	meta, ok := catalog[set]
	if !ok {
		return nil, fmt.Errorf("parse measurements: %w: %q", ErrUnknownSet, set)
	}
	file := inputName(r, "measurements")
	type key struct {
		model       string
		size, batch int
	}
	src := &Source{Meta: meta}
	util := map[key]map[string]float64{}
	var points []SourcePoint
	seen := map[key]bool{}
	_, err := eachLine(r, file, func(line int, text string) error {
		var rec measuredRecord
		if err := json.Unmarshal([]byte(text), &rec); err != nil {
			return formatErr(file, line, "not a JSON object: %v", err)
		}
		switch rec.Kind {
		case "meta", "executor":
		case "point":
			k := key{canonicalName(rec.Model), rec.Size, rec.Batch}
			if err := checkPoint(meta, k.model, k.size, k.batch); err != nil {
				return formatErr(file, line, "%v", err)
			}
			if !(rec.P50MS > 0) || math.IsInf(rec.P50MS, 0) {
				return formatErr(file, line, "point %s b=%d p=%d: p50 %v is not a positive latency", k.model, k.batch, k.size, rec.P50MS)
			}
			if seen[k] {
				return formatErr(file, line, "point %s b=%d p=%d appears twice", k.model, k.batch, k.size)
			}
			seen[k] = true
			points = append(points, SourcePoint{Model: k.model, Batch: k.batch, Size: k.size, LatencyMS: rec.P50MS})
		case "util":
			k := key{canonicalName(rec.Model), rec.Size, rec.Batch}
			if rec.Metric != "sm" && rec.Metric != "l2" && rec.Metric != "dram" {
				return formatErr(file, line, "util metric %q is not sm, l2 or dram", rec.Metric)
			}
			if rec.Value == nil {
				return nil
			}
			if v := *rec.Value; v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
				return formatErr(file, line, "util %s of %s: %v is not a percentage", rec.Metric, k.model, v)
			}
			if util[k] == nil {
				util[k] = map[string]float64{}
			}
			util[k][rec.Metric] = *rec.Value
		case "pair":
			a, b := canonicalName(rec.ModelA), canonicalName(rec.ModelB)
			for _, side := range []struct {
				m        string
				size, bt int
				lat      float64
			}{{a, rec.SizeA, rec.BatchA, rec.ColocA}, {b, rec.SizeB, rec.BatchB, rec.ColocB}} {
				if err := checkPoint(meta, side.m, side.size, side.bt); err != nil {
					return formatErr(file, line, "pair: %v", err)
				}
				if !(side.lat > 0) || math.IsInf(side.lat, 0) {
					return formatErr(file, line, "pair: co-located latency %v of %s is not positive", side.lat, side.m)
				}
			}
			src.Pairs = append(src.Pairs, CoLocation{Model1: a, Model2: b, Batch1: rec.BatchA, Batch2: rec.BatchB,
				Size1: rec.SizeA, Size2: rec.SizeB, Latency1MS: rec.ColocA, Latency2MS: rec.ColocB})
		default:
			return formatErr(file, line, "unknown record kind %q", rec.Kind)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(points) == 0 {
		return nil, fmt.Errorf("read %s: %w: no point records", file, ErrFormat)
	}
	names := map[string]bool{}
	for i := range points {
		p := &points[i]
		names[p.Model] = true
		u := util[key{p.Model, p.Size, p.Batch}]
		p.L2, p.DRAM = math.NaN(), math.NaN()
		if v, ok := u["l2"]; ok {
			p.L2 = v
		}
		if v, ok := u["dram"]; ok {
			p.DRAM = v
		}
	}
	for _, c := range src.Pairs {
		if !names[c.Model1] || !names[c.Model2] {
			return nil, fmt.Errorf("read %s: %w: a pair of %s and %s, which have no solo points", file, ErrFormat, c.Model1, c.Model2)
		}
	}
	slices.SortFunc(points, func(x, y SourcePoint) int {
		if c := strings.Compare(x.Model, y.Model); c != 0 {
			return c
		}
		if x.Batch != y.Batch {
			return x.Batch - y.Batch
		}
		return x.Size - y.Size
	})
	src.Points = points
	for _, n := range slices.Sorted(maps.Keys(names)) {
		src.Models = append(src.Models, ModelName{Name: n, Label: n})
	}
	return src, nil
}

// checkPoint reports a (model, size, batch) outside the set's sizes and
// batches.
func checkPoint(m Meta, model string, size, batch int) error {
	if model == "" {
		return fmt.Errorf("a record without a model")
	}
	if !slices.Contains(m.Sizes, size) {
		return fmt.Errorf("%s: size %d is not one of the set's sizes %v", model, size, m.Sizes)
	}
	if batch < 1 || batch > m.MaxBatch {
		return fmt.Errorf("%s: batch %d is outside 1..%d", model, batch, m.MaxBatch)
	}
	return nil
}

// ConvertMeasured converts a campaign's measurements for the named set into
// the reference format.
func ConvertMeasured(r io.Reader, w io.Writer, set string) error {
	src, err := ParseMeasured(r, set)
	if err != nil {
		return fmt.Errorf("convert %s measurements: %w", set, err)
	}
	return src.Encode(w)
}
