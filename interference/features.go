package interference

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
)

// ErrUnknownFeature is returned for a feature name that is not defined.
var ErrUnknownFeature = errors.New("unknown feature")

// Const is the name of the intercept feature (always 1).
const Const = "const"

// sideQuantities are the per-side base quantities. Each is available for the
// model being predicted ("<q>_self") and for its neighbour ("<q>_other").
// Utilisations stay in percent, as profiled; size is a fraction of the GPU.
// Because the two gpu-lets of a measured pair fill the GPU, size_other is
// 1 − size_self on such data: use one of them with an intercept, not both.
var sideQuantities = map[string]func(Side) float64{
	"l2":   func(s Side) float64 { return s.Util.L2 },
	"dram": func(s Side) float64 { return s.Util.DRAM },
	"sm":   func(s Side) float64 { return s.Util.SM },
	// dram_l2 is DRAM over L2 utilisation: how much of the model's L2
	// traffic goes on to DRAM.
	"dram_l2":   func(s Side) float64 { return s.Util.DRAM / s.Util.L2 },
	"size":      func(s Side) float64 { return float64(s.Size) / 100 },
	"inv_size":  func(s Side) float64 { return 100 / float64(s.Size) },
	"batch":     func(s Side) float64 { return float64(s.Batch) },
	"log_batch": func(s Side) float64 { return math.Log(float64(s.Batch)) },
	"log_solo":  func(s Side) float64 { return math.Log(s.SoloMS) },
	// log_b1 is ln L(1,p), the latency of a batch of one at this size: a
	// model-level scale (short, launch-bound models against long ones).
	"log_b1": func(s Side) float64 { return math.Log(s.Batch1MS) },
	// fixed is the batch-independent share of the batch latency,
	// L(1,p)/L(b,p): 1 at batch 1, small for large batches of heavy models.
	// A neighbour with a high share runs small, launch-bound batches: many
	// short kernels and synchronisations.
	"fixed": func(s Side) float64 { return s.Batch1MS / s.SoloMS },
	// serial is the share of the batch latency that does not scale with the
	// SM share, SerialMS/L(b,p), clamped to [0, 1] (NaN stays NaN).
	"serial": func(s Side) float64 { return min(max(s.SerialMS/s.SoloMS, 0), 1) },
}

// featureFunc resolves a feature name. A name is Const, "<q>_self",
// "<q>_other" for a base quantity q, or a product "a*b*..." of such names.
func featureFunc(name string) (func(Sample) float64, error) {
	if name == Const {
		return func(Sample) float64 { return 1 }, nil
	}
	if strings.Contains(name, "*") {
		parts := strings.Split(name, "*")
		fs := make([]func(Sample) float64, len(parts))
		for i, p := range parts {
			f, err := featureFunc(p)
			if err != nil {
				return nil, err
			}
			fs[i] = f
		}
		return func(s Sample) float64 {
			v := 1.0
			for _, f := range fs {
				v *= f(s)
			}
			return v
		}, nil
	}
	if q, ok := strings.CutSuffix(name, "_self"); ok {
		if f, ok := sideQuantities[q]; ok {
			return func(s Sample) float64 { return f(s.Self) }, nil
		}
	}
	if q, ok := strings.CutSuffix(name, "_other"); ok {
		if f, ok := sideQuantities[q]; ok {
			return func(s Sample) float64 { return f(s.Other) }, nil
		}
	}
	return nil, fmt.Errorf("resolve feature %q: %w", name, ErrUnknownFeature)
}

// FeatureValue evaluates one named feature on a sample.
func FeatureValue(name string, s Sample) (float64, error) {
	f, err := featureFunc(name)
	if err != nil {
		return 0, err
	}
	return f(s), nil
}

// FeatureNames lists the base feature names (products of them are also
// accepted, written "a*b").
func FeatureNames() []string {
	names := []string{Const}
	for q := range sideQuantities {
		names = append(names, q+"_self", q+"_other")
	}
	slices.Sort(names)
	return names
}

// featurizer evaluates a list of features on samples.
type featurizer struct {
	names []string
	fs    []func(Sample) float64
}

func newFeaturizer(names []string) (*featurizer, error) {
	if len(names) == 0 {
		return nil, fmt.Errorf("build features: %w: empty feature list", ErrUnknownFeature)
	}
	fz := &featurizer{names: slices.Clone(names)}
	for _, n := range names {
		f, err := featureFunc(n)
		if err != nil {
			return nil, err
		}
		fz.fs = append(fz.fs, f)
	}
	return fz, nil
}

// row fills dst with the features of s and reports the first feature that is
// not a finite number.
func (fz *featurizer) row(s Sample, dst []float64) error {
	for i, f := range fz.fs {
		v := f(s)
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("evaluate feature %s: %w: value %v (self %s b=%d p=%d, other %s b=%d p=%d)",
				fz.names[i], ErrBadSample, v, s.Self.Model, s.Self.Batch, s.Self.Size, s.Other.Model, s.Other.Batch, s.Other.Size)
		}
		dst[i] = v
	}
	return nil
}
