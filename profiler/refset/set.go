package refset

import (
	"bytes"
	"embed"
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/gpulet/gpuletd/gpulet"
)

//go:generate go run ./gen

//go:embed data/*.ref
var dataFS embed.FS

// Set is a reference profile set: an emulated device type backed by real
// data.
type Set struct {
	Name string
	// DeviceType is the device type name profiles of this set carry; it is
	// the set name, so two sets of the same GPU (igniter-v100 and
	// shepherd-v100) never share stored profiles.
	DeviceType   string
	GPU          string // the GPU measured, with its memory
	Source       string // original file (under ../shared/data) and citation
	Partitioning string // PartitionMPS, PartitionNone or PartitionMIG
	// MIGModel names the MIG table (gpulet/migrules) of a PartitionMIG
	// set's GPU.
	MIGModel  string
	Sizes     []int   // allowed gpu-let sizes, percent
	MemoryGiB float64 // device memory
	MaxBatch  int
	Models    []*Model // in source order
	// Pairs are the measured co-locations (iGniter only).
	Pairs []CoLocation

	byName map[string]*Model
}

// Model is one model of a set.
type Model struct {
	Name  string // canonical name (lowercase)
	Label string // as the source spells it
	// Profile is L(b,p), with solo L2/DRAM utilisation where the source has
	// it (NaN elsewhere, SM always NaN). Its MemoryMB is FootprintMB's
	// estimate.
	Profile *gpulet.Profile
	// SLOMS is the SLO the source gives, 0 when it gives none.
	SLOMS float64
	// Linear is the published ℓ(b) = α·b + β the profile was built from
	// (whole-GPU sets); zero for measured sets.
	Linear LinearModel

	derived map[[2]int]bool
}

// IsDerived reports whether the profile point (b,p) was filled by
// FillMethod rather than measured or published.
func (m *Model) IsDerived(b, p int) bool { return m.derived[[2]int{b, p}] }

// DerivedPoints returns the filled points, ascending by size then batch.
func (m *Model) DerivedPoints() []gpulet.Point {
	var out []gpulet.Point
	for _, pt := range m.Profile.Points() {
		if m.IsDerived(pt.Batch, pt.Size) {
			out = append(out, pt)
		}
	}
	return out
}

// Names returns the names of the reference sets, sorted.
func Names() []string { return slices.Sorted(maps.Keys(catalog)) }

// Origin returns the original file of a set, relative to the shared data
// folder (../shared/data).
func Origin(name string) (string, error) {
	m, ok := catalog[name]
	if !ok {
		return "", fmt.Errorf("look up set %q: %w", name, ErrUnknownSet)
	}
	return m.Origin, nil
}

// Embedded returns the embedded reference file of a set.
func Embedded(name string) ([]byte, error) {
	if _, ok := catalog[name]; !ok {
		return nil, fmt.Errorf("look up set %q: %w", name, ErrUnknownSet)
	}
	b, err := dataFS.ReadFile("data/" + name + ".ref")
	if err != nil {
		return nil, fmt.Errorf("read embedded set %s: %w", name, err)
	}
	return b, nil
}

// Load decodes the embedded reference file of the named set and builds it.
func Load(name string) (*Set, error) {
	b, err := Embedded(name)
	if err != nil {
		return nil, err
	}
	src, err := DecodeSource(bytes.NewReader(b), "data/"+name+".ref")
	if err != nil {
		return nil, fmt.Errorf("load set %s: %w", name, err)
	}
	if src.Meta.Name != name {
		return nil, fmt.Errorf("load set %s: %w: file names set %q", name, ErrFormat, src.Meta.Name)
	}
	return Build(src)
}

// Model returns the named model of the set.
func (s *Set) Model(name string) (*Model, bool) {
	m, ok := s.byName[name]
	return m, ok
}

// ModelNames returns the set's model names in source order.
func (s *Set) ModelNames() []string {
	out := make([]string, len(s.Models))
	for i, m := range s.Models {
		out[i] = m.Name
	}
	return out
}

// Build turns a source into a set: profiles from measured points (filling
// the gpu-let sizes the source lacks with FillMethod) or from published
// α/β lines (batches 1..MaxBatch on the whole GPU), SLOs and footprints.
func Build(src *Source) (*Set, error) {
	m := src.Meta
	s := &Set{
		Name: m.Name, DeviceType: m.Name, GPU: m.GPU,
		Source:       OriginPath(m.Origin) + " — " + m.Citation,
		Partitioning: m.Partitioning, Sizes: slices.Clone(m.Sizes),
		MemoryGiB: m.MemoryGiB, MaxBatch: m.MaxBatch,
		Pairs:  slices.Clone(src.Pairs),
		byName: map[string]*Model{},
	}
	points := map[string][]gpulet.Point{}
	for _, p := range src.Points {
		points[p.Model] = append(points[p.Model], gpulet.Point{
			Batch: p.Batch, Size: p.Size, P50MS: p.LatencyMS,
			Util: gpulet.Util{SM: math.NaN(), L2: p.L2, DRAM: p.DRAM},
		})
	}
	if m.Partitioning == PartitionMIG {
		s.MIGModel = migTables[m.Name]
		for _, mn := range src.Models {
			var segs []SegmentPoint
			for _, g := range src.Segments {
				if g.Model == mn.Name {
					segs = append(segs, g)
				}
			}
			pts, err := segmentPoints(segs)
			if err != nil {
				return nil, fmt.Errorf("build set %s: model %s: %w", m.Name, mn.Name, err)
			}
			points[mn.Name] = append(points[mn.Name], pts...)
		}
	}
	linear := map[string]LinearModel{}
	for _, l := range src.Linear {
		linear[l.Model] = l
	}
	for _, mn := range src.Models {
		model := &Model{Name: mn.Name, Label: mn.Label, derived: map[[2]int]bool{}}
		pts := points[mn.Name]
		if l, ok := linear[mn.Name]; ok {
			model.Linear, model.SLOMS = l, l.SLOMS
			for b := 1; b <= m.MaxBatch; b++ {
				pts = append(pts, gpulet.Point{Batch: b, Size: 100, P50MS: l.AlphaMS*float64(b) + l.BetaMS, Util: gpulet.UnknownUtil()})
			}
		} else if len(pts) > 0 && m.Partitioning == PartitionMPS && slices.Contains(m.Sizes, 100) {
			lat := map[[2]int]float64{}
			for _, p := range pts {
				lat[[2]int{p.Batch, p.Size}] = p.P50MS
			}
			for b, ms := range fillSize(lat, m.MaxBatch, 100) {
				model.derived[[2]int{b, 100}] = true
				pts = append(pts, gpulet.Point{Batch: b, Size: 100, P50MS: ms, Util: gpulet.UnknownUtil(), Derived: true})
			}
		}
		if len(pts) == 0 {
			return nil, fmt.Errorf("build set %s: model %s: %w: no points and no α/β line", m.Name, mn.Name, ErrFormat)
		}
		mem, _ := FootprintMB(mn.Name)
		prof, err := gpulet.NewProfile(mn.Name, s.DeviceType, mem, pts)
		if err != nil {
			return nil, fmt.Errorf("build set %s: %w", m.Name, err)
		}
		model.Profile = prof
		s.Models = append(s.Models, model)
		s.byName[mn.Name] = model
	}
	for i, c := range s.Pairs {
		for _, name := range []string{c.Model1, c.Model2} {
			if _, ok := s.byName[name]; !ok {
				return nil, fmt.Errorf("build set %s: pair %d: %w: unknown model %q", m.Name, i+1, ErrFormat, name)
			}
		}
	}
	return s, nil
}
