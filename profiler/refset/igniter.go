package refset

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// The iGniter profile (../shared/data/igniter/v100-mps-profile.jsonl) is one
// JSON object per line. A model line is {"<model>": {"<kind>": {"<batch>":
// {"<pct>": value}}}} with kind latency (ms), throughput (req/s), l2cache or
// dram (utilisation, percent); the interference lines are {"interference":
// {"latency"|"std": [[model1, model2, batch1, batch2, pct1, v1, v2], ...]}}
// where model2 runs at 100 − pct1.
const (
	kindLatency    = "latency"
	kindThroughput = "throughput"
	kindL2         = "l2cache"
	kindDRAM       = "dram"
	keyInterf      = "interference"
	kindStd        = "std"
)

// maxLine bounds one line of a source file (the iGniter co-location line is
// about 80 kB).
const maxLine = 16 << 20

type grid map[[2]int]float64 // (batch, size) → value

type igniterParse struct {
	file     string
	maxBatch int
	models   []string
	grids    map[string]map[string]grid // model → kind → grid
	where    map[string]int             // "model/kind" → line
	rows     map[string][]pairRow       // "latency" | "std" → rows
	rowsAt   map[string]int
}

type pairRow struct {
	m1, m2         string
	b1, b2, p1     int
	v1, v2         float64
	line, position int
}

// ParseIgniter reads iGniter's V100 MPS profile (JSON lines) into a Source
// with the igniter-v100 metadata. Errors wrap ErrFormat and name the file
// (when r is a named file), the line and the problem; a file that ends
// early is reported by what it lacks.
func ParseIgniter(r io.Reader) (*Source, error) {
	p := &igniterParse{
		file:     inputName(r, "igniter profile"),
		maxBatch: catalog[SetIgniterV100].MaxBatch,
		grids:    map[string]map[string]grid{},
		where:    map[string]int{},
		rows:     map[string][]pairRow{},
		rowsAt:   map[string]int{},
	}
	line, err := eachLine(r, p.file, func(line int, text string) error { return p.line(line, []byte(text)) })
	if err != nil {
		return nil, err
	}
	return p.assemble(line)
}

func (p *igniterParse) line(line int, text []byte) error {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(text, &top); err != nil {
		return formatErr(p.file, line, "not a JSON object: %v", err)
	}
	if len(top) == 0 {
		return formatErr(p.file, line, "empty object")
	}
	keys := make([]string, 0, len(top))
	for k := range top {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, key := range keys {
		var kinds map[string]json.RawMessage
		if err := json.Unmarshal(top[key], &kinds); err != nil {
			return formatErr(p.file, line, "%s: not an object of tables: %v", key, err)
		}
		kindNames := make([]string, 0, len(kinds))
		for k := range kinds {
			kindNames = append(kindNames, k)
		}
		slices.Sort(kindNames)
		for _, kind := range kindNames {
			var err error
			if key == keyInterf {
				err = p.pairs(line, kind, kinds[kind])
			} else {
				err = p.grid(line, key, kind, kinds[kind])
			}
			if err != nil {
				return err
			}
		}
	}
	return nil
}

func (p *igniterParse) grid(line int, model, kind string, raw json.RawMessage) error {
	switch kind {
	case kindLatency, kindThroughput, kindL2, kindDRAM:
	default:
		return formatErr(p.file, line, "%s: unknown table %q", model, kind)
	}
	if canonicalName(model) != model || model == "" {
		return formatErr(p.file, line, "model name %q is not lowercase letters, digits, '.', '_' or '-'", model)
	}
	id := model + "/" + kind
	if at, dup := p.where[id]; dup {
		return formatErr(p.file, line, "%s %s table given twice (first on line %d)", model, kind, at)
	}
	p.where[id] = line
	var byBatch map[string]map[string]float64
	if err := json.Unmarshal(raw, &byBatch); err != nil {
		return formatErr(p.file, line, "%s %s: want {batch: {pct: number}}: %v", model, kind, err)
	}
	g := grid{}
	for bs, row := range byBatch {
		b, err := strconv.Atoi(bs)
		if err != nil || b < 1 {
			return formatErr(p.file, line, "%s %s: batch %q is not a positive integer", model, kind, bs)
		}
		if b > p.maxBatch {
			return formatErr(p.file, line, "%s %s: batch %d exceeds the set's largest batch %d", model, kind, b, p.maxBatch)
		}
		for ps, v := range row {
			sz, err := strconv.Atoi(ps)
			if err != nil || sz < 1 || sz > 100 {
				return formatErr(p.file, line, "%s %s: batch %d: percentage %q is not an integer in 1..100", model, kind, b, ps)
			}
			if err := checkValue(kind, v); err != nil {
				return formatErr(p.file, line, "%s %s at b=%d p=%d: %v", model, kind, b, sz, err)
			}
			g[[2]int{b, sz}] = v
		}
	}
	if len(g) == 0 {
		return formatErr(p.file, line, "%s %s: empty table", model, kind)
	}
	if p.grids[model] == nil {
		p.grids[model] = map[string]grid{}
		p.models = append(p.models, model)
	}
	p.grids[model][kind] = g
	return nil
}

func checkValue(kind string, v float64) error {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return fmt.Errorf("value %v is not finite", v)
	case (kind == kindLatency || kind == kindThroughput) && !(v > 0):
		return fmt.Errorf("value %v must be positive", v)
	case (kind == kindL2 || kind == kindDRAM) && (v < 0 || v > 100):
		return fmt.Errorf("utilisation %v%% is outside 0..100", v)
	}
	return nil
}

func (p *igniterParse) pairs(line int, kind string, raw json.RawMessage) error {
	if kind != kindLatency && kind != kindStd {
		return formatErr(p.file, line, "interference: unknown table %q", kind)
	}
	if at, dup := p.rowsAt[kind]; dup {
		return formatErr(p.file, line, "interference %s given twice (first on line %d)", kind, at)
	}
	p.rowsAt[kind] = line
	var rows [][]json.RawMessage
	if err := json.Unmarshal(raw, &rows); err != nil {
		return formatErr(p.file, line, "interference %s: want a list of rows: %v", kind, err)
	}
	if len(rows) == 0 {
		return formatErr(p.file, line, "interference %s: no rows", kind)
	}
	out := make([]pairRow, 0, len(rows))
	for i, row := range rows {
		pr, err := decodePairRow(row)
		if err != nil {
			return formatErr(p.file, line, "interference %s row %d: %v", kind, i+1, err)
		}
		if max(pr.b1, pr.b2) > p.maxBatch {
			return formatErr(p.file, line, "interference %s row %d: batch %d exceeds the set's largest batch %d", kind, i+1, max(pr.b1, pr.b2), p.maxBatch)
		}
		if kind == kindLatency && (!(pr.v1 > 0) || !(pr.v2 > 0)) {
			return formatErr(p.file, line, "interference latency row %d: latencies %v, %v must be positive", i+1, pr.v1, pr.v2)
		}
		if kind == kindStd && (pr.v1 < 0 || pr.v2 < 0) {
			return formatErr(p.file, line, "interference std row %d: deviations %v, %v must not be negative", i+1, pr.v1, pr.v2)
		}
		pr.line, pr.position = line, i+1
		out = append(out, pr)
	}
	p.rows[kind] = out
	return nil
}

// decodePairRow decodes [model1, model2, batch1, batch2, pct1, v1, v2].
func decodePairRow(row []json.RawMessage) (pairRow, error) {
	var pr pairRow
	if len(row) != 7 {
		return pr, fmt.Errorf("has %d fields, want 7 [model1, model2, batch1, batch2, pct1, v1, v2]", len(row))
	}
	names := []*string{&pr.m1, &pr.m2}
	for i, dst := range names {
		if err := json.Unmarshal(row[i], dst); err != nil {
			return pr, fmt.Errorf("field %d: want a model name: %v", i+1, err)
		}
	}
	ints := []*int{&pr.b1, &pr.b2, &pr.p1}
	for i, dst := range ints {
		var f float64
		if err := json.Unmarshal(row[2+i], &f); err != nil || f != math.Trunc(f) || f < 1 {
			return pr, fmt.Errorf("field %d (%s): want a positive integer", 3+i, row[2+i])
		}
		*dst = int(f)
	}
	if pr.p1 >= 100 {
		return pr, fmt.Errorf("pct1 %d leaves nothing for model2", pr.p1)
	}
	floats := []*float64{&pr.v1, &pr.v2}
	for i, dst := range floats {
		if err := json.Unmarshal(row[5+i], dst); err != nil || math.IsNaN(*dst) || math.IsInf(*dst, 0) {
			return pr, fmt.Errorf("field %d (%s): want a finite number", 6+i, row[5+i])
		}
	}
	return pr, nil
}

func (p *igniterParse) assemble(lastLine int) (*Source, error) {
	src := &Source{Meta: catalog[SetIgniterV100]}
	end := lastLine + 1
	if len(p.models) == 0 {
		return nil, formatErr(p.file, end, "no model tables (empty or truncated file)")
	}
	for _, m := range p.models {
		kinds := p.grids[m]
		for _, need := range []string{kindLatency, kindL2, kindDRAM} {
			if kinds[need] == nil {
				return nil, formatErr(p.file, end, "model %s has no %s table (truncated file?)", m, need)
			}
		}
		src.Models = append(src.Models, ModelName{Name: m, Label: m})
		lat := kinds[kindLatency]
		for _, util := range []string{kindL2, kindDRAM} {
			for k := range kinds[util] {
				if _, ok := lat[k]; !ok {
					return nil, formatErr(p.file, p.where[m+"/"+util], "%s %s at b=%d p=%d has no latency", m, util, k[0], k[1])
				}
			}
		}
		keys := make([][2]int, 0, len(lat))
		for k := range lat {
			keys = append(keys, k)
		}
		slices.SortFunc(keys, func(a, b [2]int) int {
			if a[1] != b[1] {
				return a[1] - b[1]
			}
			return a[0] - b[0]
		})
		for _, k := range keys {
			pt := SourcePoint{Model: m, Batch: k[0], Size: k[1], LatencyMS: lat[k], L2: math.NaN(), DRAM: math.NaN()}
			if v, ok := kinds[kindL2][k]; ok {
				pt.L2 = v
			}
			if v, ok := kinds[kindDRAM][k]; ok {
				pt.DRAM = v
			}
			src.Points = append(src.Points, pt)
		}
	}
	lat, std := p.rows[kindLatency], p.rows[kindStd]
	switch {
	case lat == nil:
		return nil, formatErr(p.file, end, "no interference latency table (truncated file?)")
	case std == nil:
		return nil, formatErr(p.file, end, "no interference std table (truncated file?)")
	case len(lat) != len(std):
		return nil, formatErr(p.file, p.rowsAt[kindStd], "interference std has %d rows, latency has %d", len(std), len(lat))
	}
	for i, l := range lat {
		for _, m := range []string{l.m1, l.m2} {
			if p.grids[m] == nil {
				return nil, formatErr(p.file, l.line, "interference latency row %d: unknown model %q", l.position, m)
			}
		}
		if l.m1 == l.m2 {
			return nil, formatErr(p.file, l.line, "interference latency row %d: model %s paired with itself", l.position, l.m1)
		}
		s := std[i]
		if l.m1 != s.m1 || l.m2 != s.m2 || l.b1 != s.b1 || l.b2 != s.b2 || l.p1 != s.p1 {
			return nil, formatErr(p.file, s.line, "interference std row %d is for %s/%s b=%d/%d p1=%d, latency row is for %s/%s b=%d/%d p1=%d",
				i+1, s.m1, s.m2, s.b1, s.b2, s.p1, l.m1, l.m2, l.b1, l.b2, l.p1)
		}
		src.Pairs = append(src.Pairs, CoLocation{
			Model1: l.m1, Model2: l.m2, Batch1: l.b1, Batch2: l.b2, Size1: l.p1, Size2: 100 - l.p1,
			Latency1MS: l.v1, Latency2MS: l.v2, Std1MS: s.v1, Std2MS: s.v2,
		})
	}
	return src, nil
}

// inputName is the file name of r when it has one, else def.
func inputName(r io.Reader, def string) string {
	if n, ok := r.(interface{ Name() string }); ok {
		return n.Name()
	}
	return def
}

// eachLine calls fn with every non-blank line of r (trimmed, numbered from
// 1) and returns the number of lines read; file names r in errors.
func eachLine(r io.Reader, file string, fn func(line int, text string) error) (int, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<20), maxLine)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		if err := fn(line, text); err != nil {
			return line, err
		}
	}
	if err := sc.Err(); err != nil {
		return line, fmt.Errorf("read %s line %d: %w: %v", file, line+1, ErrFormat, err)
	}
	return line, nil
}
