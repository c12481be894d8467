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
	"unicode"
)

// maxMS bounds every published time: no inference batch takes a quarter of
// an hour, and the bound keeps α·b + β finite.
const maxMS = 1e6

// ErrUnknownSet is returned for a set name that is not in Names().
var ErrUnknownSet = errors.New("unknown reference set")

// ParseAlphaBeta reads a published whole-GPU table (the Symphony and SHEPHERD
// CSVs in ../shared/data/papers: '#' comment lines, a header with model,
// alpha_ms, beta_ms and optionally slo_ms) into a Source with the metadata of
// the named set. Errors wrap ErrFormat and name the file (when r is a named
// file), the line and the problem; a table with fewer models than the
// published one is reported as truncated.
func ParseAlphaBeta(r io.Reader, set string) (*Source, error) {
	meta, ok := catalog[set]
	if !ok || meta.Partitioning != PartitionNone {
		return nil, fmt.Errorf("parse alpha/beta table for %q: %w", set, ErrUnknownSet)
	}
	file := inputName(r, set+" table")
	cr := csv.NewReader(r)
	cr.Comment = '#'
	cr.TrimLeadingSpace = true
	col, err := csvColumns(cr, file, "model", "alpha_ms", "beta_ms")
	if err != nil {
		return nil, err
	}
	_, hasSLO := col["slo_ms"]
	src := &Source{Meta: meta}
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, csvErr(file, err, "row")
		}
		line, _ := cr.FieldPos(0)
		label := strings.TrimSpace(rec[col["model"]])
		name := canonicalName(label)
		if name == "" {
			return nil, formatErr(file, line, "empty model name")
		}
		if strings.ContainsFunc(label, unicode.IsControl) {
			return nil, formatErr(file, line, "model name %q has a control character", label)
		}
		if slices.ContainsFunc(src.Models, func(m ModelName) bool { return m.Name == name }) {
			return nil, formatErr(file, line, "model %q given twice", label)
		}
		lm := LinearModel{Model: name}
		num := func(c string, ok func(float64) bool, want string) (float64, error) {
			raw := strings.TrimSpace(rec[col[c]])
			v, err := strconv.ParseFloat(raw, 64)
			if err != nil || math.IsInf(v, 0) || math.IsNaN(v) || !ok(v) || v > maxMS {
				return 0, formatErr(file, line, "model %s: %s %q is not %s", label, c, raw, want)
			}
			return v, nil
		}
		positive := func(v float64) bool { return v > 0 }
		if lm.AlphaMS, err = num("alpha_ms", positive, "a positive number"); err != nil {
			return nil, err
		}
		if lm.BetaMS, err = num("beta_ms", func(v float64) bool { return v >= 0 }, "a number ≥ 0"); err != nil {
			return nil, err
		}
		if hasSLO {
			if lm.SLOMS, err = num("slo_ms", positive, "a positive number"); err != nil {
				return nil, err
			}
		}
		src.Models = append(src.Models, ModelName{Name: name, Label: label})
		src.Linear = append(src.Linear, lm)
	}
	if want := expectedModels[set]; len(src.Models) != want {
		line, _ := cr.FieldPos(0)
		return nil, formatErr(file, line, "%d models, the published table has %d (truncated or altered file?)", len(src.Models), want)
	}
	return src, nil
}

// csvColumns reads a CSV header and returns each column's index by its
// trimmed name; a header without one of the needed columns is an ErrFormat
// error naming it.
func csvColumns(cr *csv.Reader, file string, need ...string) (map[string]int, error) {
	header, err := cr.Read()
	if err != nil {
		return nil, csvErr(file, err, "header")
	}
	col := map[string]int{}
	for i, h := range header {
		col[strings.TrimSpace(h)] = i
	}
	for _, n := range need {
		if _, ok := col[n]; !ok {
			line, _ := cr.FieldPos(0)
			return nil, formatErr(file, line, "header has no %q column (have %s)", n, strings.Join(header, ","))
		}
	}
	return col, nil
}

func csvErr(file string, err error, what string) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return formatErr(file, pe.Line, "%s: %v", what, pe.Err)
	}
	if errors.Is(err, io.EOF) {
		return formatErr(file, 1, "no %s (empty file)", what)
	}
	return fmt.Errorf("read %s: %w", file, err)
}
