package refset

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// The reference format (data/*.ref) is line-oriented text, fields separated
// by single spaces, '#' starting a comment line:
//
//	gpuletd-refset 1
//	name <set>                      header lines, each exactly once, in this order
//	gpu <text>
//	origin <file under ../shared/data>
//	citation <text>
//	partitioning mps|none|mig
//	sizes <p> ...
//	memory_gib <GiB>
//	max_batch <b>
//	model <name> <label as the source spells it>
//	point <model> <batch> <size> <latency_ms> <l2_pct|-> <dram_pct|->
//	linear <model> <alpha_ms> <beta_ms> <slo_ms|->
//	pair <model1> <model2> <batch1> <batch2> <size1> <size2> <lat1_ms> <lat2_ms> <std1_ms> <std2_ms>
//	segment <model> <gpcs> <batch> <procs> <throughput_per_proc> <latency_ms>
//	end <points> <linears> <pairs> [<segments>]
//
// The end line gives the segment count only when the file has segments, so
// files without them read as they always did.
//
// Numbers are written with the shortest representation that reads back to
// the same float64, so a conversion is exact. The end line's counts catch a
// truncated file.
const formatMagic = "gpuletd-refset 1"

var headerKeys = []string{"name", "gpu", "origin", "citation", "partitioning", "sizes", "memory_gib", "max_batch"}

// Encode writes the source in the reference format.
func (s *Source) Encode(w io.Writer) error {
	bw := bufio.NewWriter(w)
	m := s.Meta
	fmt.Fprintln(bw, formatMagic)
	fmt.Fprintf(bw, "# Reference set %s, converted from %s; do not edit:\n", m.Name, OriginPath(m.Origin))
	fmt.Fprintln(bw, "# regenerate with `go generate ./profiler/refset`.")
	fmt.Fprintf(bw, "name %s\ngpu %s\norigin %s\ncitation %s\npartitioning %s\n", m.Name, m.GPU, m.Origin, m.Citation, m.Partitioning)
	fmt.Fprintf(bw, "sizes %s\nmemory_gib %s\nmax_batch %d\n", joinInts(m.Sizes), num(m.MemoryGiB), m.MaxBatch)
	for _, mn := range s.Models {
		fmt.Fprintf(bw, "model %s %s\n", mn.Name, mn.Label)
	}
	if len(s.Points) > 0 {
		fmt.Fprintln(bw, "# point model batch size latency_ms l2_pct dram_pct")
	}
	for _, p := range s.Points {
		fmt.Fprintf(bw, "point %s %d %d %s %s %s\n", p.Model, p.Batch, p.Size, num(p.LatencyMS), num(p.L2), num(p.DRAM))
	}
	if len(s.Linear) > 0 {
		fmt.Fprintln(bw, "# linear model alpha_ms beta_ms slo_ms")
	}
	for _, l := range s.Linear {
		slo := "-"
		if l.SLOMS > 0 {
			slo = num(l.SLOMS)
		}
		fmt.Fprintf(bw, "linear %s %s %s %s\n", l.Model, num(l.AlphaMS), num(l.BetaMS), slo)
	}
	if len(s.Pairs) > 0 {
		fmt.Fprintln(bw, "# pair model1 model2 batch1 batch2 size1 size2 latency1_ms latency2_ms std1_ms std2_ms")
	}
	for _, c := range s.Pairs {
		fmt.Fprintf(bw, "pair %s %s %d %d %d %d %s %s %s %s\n", c.Model1, c.Model2, c.Batch1, c.Batch2, c.Size1, c.Size2,
			num(c.Latency1MS), num(c.Latency2MS), num(c.Std1MS), num(c.Std2MS))
	}
	if len(s.Segments) > 0 {
		fmt.Fprintln(bw, "# segment model gpcs batch procs throughput_per_proc latency_ms")
	}
	for _, g := range s.Segments {
		fmt.Fprintf(bw, "segment %s %d %d %d %s %s\n", g.Model, g.GPCs, g.Batch, g.Procs, num(g.Throughput), num(g.LatencyMS))
	}
	if len(s.Segments) > 0 {
		fmt.Fprintf(bw, "end %d %d %d %d\n", len(s.Points), len(s.Linear), len(s.Pairs), len(s.Segments))
	} else {
		fmt.Fprintf(bw, "end %d %d %d\n", len(s.Points), len(s.Linear), len(s.Pairs))
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write reference set %s: %w", m.Name, err)
	}
	return nil
}

func num(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, " ")
}

// decoder reads the reference format.
type decoder struct {
	file   string
	line   int
	src    *Source
	header map[string]bool
	models map[string]bool
	ended  bool
}

// DecodeSource reads a source in the reference format; file names it in
// errors, which wrap ErrFormat and give the line and the problem.
func DecodeSource(r io.Reader, file string) (*Source, error) {
	d := &decoder{file: file, src: &Source{}, header: map[string]bool{}, models: map[string]bool{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	for sc.Scan() {
		d.line++
		text := sc.Text()
		if d.line == 1 {
			if text != formatMagic {
				return nil, d.errf("first line is %q, want %q", clip(text), formatMagic)
			}
			continue
		}
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		if d.ended {
			return nil, d.errf("data after the end line")
		}
		if err := d.record(text); err != nil {
			return nil, err
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s line %d: %w: %v", file, d.line+1, ErrFormat, err)
	}
	if d.line == 0 {
		return nil, formatErr(file, 1, "empty file")
	}
	if !d.ended {
		d.line++
		return nil, d.errf("no end line (truncated file)")
	}
	return d.src, nil
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

func (d *decoder) errf(format string, args ...any) error {
	return formatErr(d.file, d.line, format, args...)
}

func (d *decoder) record(text string) error {
	key, rest, _ := strings.Cut(text, " ")
	if i := slices.Index(headerKeys, key); i >= 0 {
		return d.headerLine(i, key, rest)
	}
	if len(d.header) != len(headerKeys) {
		return d.errf("%q record before the header is complete (missing %s)", key, headerKeys[len(d.header)])
	}
	f := strings.Split(rest, " ")
	switch key {
	case "model":
		return d.model(rest)
	case "point":
		return d.point(f)
	case "linear":
		return d.linear(f)
	case "pair":
		return d.pair(f)
	case "segment":
		return d.segment(f)
	case "end":
		return d.end(f)
	}
	return d.errf("unknown record %q", clip(key))
}

func (d *decoder) headerLine(i int, key, rest string) error {
	if d.header[key] {
		return d.errf("header %q given twice", key)
	}
	if i != len(d.header) {
		return d.errf("header %q out of order, want %q", key, headerKeys[len(d.header)])
	}
	if rest == "" {
		return d.errf("header %q is empty", key)
	}
	m := &d.src.Meta
	switch key {
	case "name":
		m.Name = rest
	case "gpu":
		m.GPU = rest
	case "origin":
		m.Origin = rest
	case "citation":
		m.Citation = rest
	case "partitioning":
		if rest != PartitionMPS && rest != PartitionNone && rest != PartitionMIG {
			return d.errf("partitioning %q, want %s, %s or %s", rest, PartitionMPS, PartitionNone, PartitionMIG)
		}
		m.Partitioning = rest
	case "sizes":
		for _, f := range strings.Split(rest, " ") {
			p, err := d.int(f, "size", 1, 100)
			if err != nil {
				return err
			}
			if len(m.Sizes) > 0 && p <= m.Sizes[len(m.Sizes)-1] {
				return d.errf("sizes must ascend: %d after %d", p, m.Sizes[len(m.Sizes)-1])
			}
			m.Sizes = append(m.Sizes, p)
		}
	case "memory_gib":
		v, err := d.float(rest, "memory_gib", false)
		if err != nil {
			return err
		}
		if !(v > 0) {
			return d.errf("memory_gib %v must be positive", v)
		}
		m.MemoryGiB = v
	case "max_batch":
		v, err := d.int(rest, "max_batch", 1, 1<<20)
		if err != nil {
			return err
		}
		m.MaxBatch = v
	}
	d.header[key] = true
	return nil
}

func (d *decoder) model(rest string) error {
	name, label, _ := strings.Cut(rest, " ")
	switch {
	case name == "" || canonicalName(name) != name:
		return d.errf("model name %q is not canonical (lowercase letters, digits, '.', '_', '-')", clip(name))
	case label == "":
		return d.errf("model %s has no label", name)
	case d.models[name]:
		return d.errf("model %s declared twice", name)
	}
	d.models[name] = true
	d.src.Models = append(d.src.Models, ModelName{Name: name, Label: label})
	return nil
}

func (d *decoder) knownModel(name string) error {
	if !d.models[name] {
		return d.errf("model %q is not declared by a model line", clip(name))
	}
	return nil
}

func (d *decoder) fields(f []string, want int, what string) error {
	if len(f) != want {
		return d.errf("%s record has %d fields, want %d", what, len(f), want)
	}
	return nil
}

func (d *decoder) point(f []string) error {
	if err := d.fields(f, 6, "point"); err != nil {
		return err
	}
	if err := d.knownModel(f[0]); err != nil {
		return err
	}
	p := SourcePoint{Model: f[0]}
	var err error
	if p.Batch, err = d.int(f[1], "batch", 1, d.src.Meta.MaxBatch); err != nil {
		return err
	}
	if p.Size, err = d.int(f[2], "size", 1, 100); err != nil {
		return err
	}
	if p.LatencyMS, err = d.float(f[3], "latency_ms", false); err != nil {
		return err
	}
	if !(p.LatencyMS > 0) {
		return d.errf("latency_ms %v must be positive", p.LatencyMS)
	}
	if p.L2, err = d.util(f[4], "l2_pct"); err != nil {
		return err
	}
	if p.DRAM, err = d.util(f[5], "dram_pct"); err != nil {
		return err
	}
	d.src.Points = append(d.src.Points, p)
	return nil
}

func (d *decoder) linear(f []string) error {
	if err := d.fields(f, 4, "linear"); err != nil {
		return err
	}
	if err := d.knownModel(f[0]); err != nil {
		return err
	}
	l := LinearModel{Model: f[0]}
	var err error
	if l.AlphaMS, err = d.float(f[1], "alpha_ms", false); err != nil {
		return err
	}
	if l.BetaMS, err = d.float(f[2], "beta_ms", false); err != nil {
		return err
	}
	if !(l.AlphaMS > 0) || l.BetaMS < 0 {
		return d.errf("alpha_ms %v must be positive and beta_ms %v not negative", l.AlphaMS, l.BetaMS)
	}
	slo, err := d.float(f[3], "slo_ms", true)
	if err != nil {
		return err
	}
	if !math.IsNaN(slo) {
		if !(slo > 0) {
			return d.errf("slo_ms %v must be positive", slo)
		}
		l.SLOMS = slo
	}
	d.src.Linear = append(d.src.Linear, l)
	return nil
}

func (d *decoder) pair(f []string) error {
	if err := d.fields(f, 10, "pair"); err != nil {
		return err
	}
	c := CoLocation{Model1: f[0], Model2: f[1]}
	for _, m := range f[:2] {
		if err := d.knownModel(m); err != nil {
			return err
		}
	}
	ints := []*int{&c.Batch1, &c.Batch2, &c.Size1, &c.Size2}
	names := []string{"batch1", "batch2", "size1", "size2"}
	for i, dst := range ints {
		hi := 100
		if i < 2 {
			hi = d.src.Meta.MaxBatch
		}
		v, err := d.int(f[2+i], names[i], 1, hi)
		if err != nil {
			return err
		}
		*dst = v
	}
	if c.Size1+c.Size2 > 100 {
		return d.errf("sizes %d + %d exceed the GPU", c.Size1, c.Size2)
	}
	floats := []*float64{&c.Latency1MS, &c.Latency2MS, &c.Std1MS, &c.Std2MS}
	fnames := []string{"latency1_ms", "latency2_ms", "std1_ms", "std2_ms"}
	for i, dst := range floats {
		v, err := d.float(f[6+i], fnames[i], false)
		if err != nil {
			return err
		}
		if (i < 2 && !(v > 0)) || v < 0 {
			return d.errf("%s %v out of range", fnames[i], v)
		}
		*dst = v
	}
	d.src.Pairs = append(d.src.Pairs, c)
	return nil
}

func (d *decoder) end(f []string) error {
	if len(f) != 3 && len(f) != 4 {
		return d.errf("end record has %d fields, want 3 or 4", len(f))
	}
	got := []int{len(d.src.Points), len(d.src.Linear), len(d.src.Pairs), len(d.src.Segments)}
	names := []string{"point", "linear", "pair", "segment"}
	if len(f) == 3 && got[3] > 0 {
		return d.errf("end line counts no segment records, the file has %d (truncated or edited file?)", got[3])
	}
	for i := range f {
		n, err := d.int(f[i], names[i]+" count", 0, 1<<30)
		if err != nil {
			return err
		}
		if n != got[i] {
			return d.errf("end line counts %d %s records, the file has %d (truncated or edited file?)", n, names[i], got[i])
		}
	}
	d.ended = true
	return nil
}

func (d *decoder) segment(f []string) error {
	if err := d.fields(f, 6, "segment"); err != nil {
		return err
	}
	if err := d.knownModel(f[0]); err != nil {
		return err
	}
	g := SegmentPoint{Model: f[0]}
	var err error
	if g.GPCs, err = d.int(f[1], "gpcs", 1, 7); err != nil {
		return err
	}
	if _, err := segmentSize(g.GPCs); err != nil {
		return d.errf("gpcs %d is no MIG instance size", g.GPCs)
	}
	if g.Batch, err = d.int(f[2], "batch", 1, d.src.Meta.MaxBatch); err != nil {
		return err
	}
	if g.Procs, err = d.int(f[3], "procs", 1, maxProcs); err != nil {
		return err
	}
	for _, x := range []struct {
		dst  *float64
		s    string
		what string
	}{{&g.Throughput, f[4], "throughput_per_proc"}, {&g.LatencyMS, f[5], "latency_ms"}} {
		if *x.dst, err = d.float(x.s, x.what, false); err != nil {
			return err
		}
		if !(*x.dst > 0) {
			return d.errf("%s %v must be positive", x.what, *x.dst)
		}
	}
	d.src.Segments = append(d.src.Segments, g)
	return nil
}

func (d *decoder) int(s, what string, lo, hi int) (int, error) {
	v, err := strconv.Atoi(s)
	if err != nil || v < lo || v > hi {
		return 0, d.errf("%s %q is not an integer in %d..%d", what, clip(s), lo, hi)
	}
	return v, nil
}

// float parses a finite number; "-" reads as NaN when unknown is allowed.
func (d *decoder) float(s, what string, unknownOK bool) (float64, error) {
	if s == "-" && unknownOK {
		return math.NaN(), nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, d.errf("%s %q is not a finite number", what, clip(s))
	}
	return v, nil
}

func (d *decoder) util(s, what string) (float64, error) {
	v, err := d.float(s, what, true)
	if err != nil {
		return 0, err
	}
	if v < 0 || v > 100 {
		return 0, d.errf("%s %v is outside 0..100", what, v)
	}
	return v, nil
}
