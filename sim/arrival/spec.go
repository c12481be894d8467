package arrival

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// Kind names an arrival process.
type Kind string

// The arrival processes.
const (
	// KindPoisson has exponential gaps: coefficient of variation 1.
	KindPoisson Kind = "poisson"
	// KindGamma has Gamma-distributed gaps of a given shape k: coefficient
	// of variation 1/√k (k < 1 is burstier than Poisson, k > 1 smoother).
	KindGamma Kind = "gamma"
	// KindTrace replays the gaps between a trace's timestamps.
	KindTrace Kind = "trace"
	// KindConstant has even gaps: coefficient of variation 0.
	KindConstant Kind = "constant"
)

// kindIntervals is how a spec names a trace of intervals (a KindTrace
// whose Spec.Intervals is set).
const kindIntervals Kind = "intervals"

// ErrBadSpec is wrapped by every error about an arrival spec that cannot be
// parsed or used.
var ErrBadSpec = errors.New("bad arrival spec")

// specHelp is what every spec error ends with.
const specHelp = "use poisson, constant, gamma:<shape>, gamma:shape=<k>, gamma:cv=<c>, trace:<file>, trace:<file>@<rate scale> or intervals:<file>"

// Spec is a parsed arrival spec.
type Spec struct {
	// Kind is the process.
	Kind Kind
	// Shape is the Gamma shape k (KindGamma only).
	Shape float64
	// Path is the trace file (KindTrace only).
	Path string
	// Scale multiplies the trace's own rate (KindTrace only); 0 means the
	// trace is rescaled to the target rate instead.
	Scale float64
	// Intervals: the trace's file holds the gaps between arrivals in
	// microseconds (ReadIntervals), not their times (KindTrace only).
	Intervals bool
}

// Parse reads an arrival spec:
//
//	poisson
//	constant               even gaps of 1/rate
//	gamma:<shape>          a bare number is the shape k
//	gamma:shape=<k>
//	gamma:cv=<c>           coefficient of variation c, shape 1/c²
//	trace:<file>           the trace's gaps, rescaled to the target rate
//	trace:<file>@<scale>   the trace's gaps at <scale> times its own rate
//	intervals:<file>       the file's gaps in microseconds, a line each, at their own rate
//	intervals:<file>@<scale>  the same at <scale> times that rate
func Parse(spec string) (Spec, error) {
	s := strings.TrimSpace(spec)
	kind, arg, hasArg := strings.Cut(s, ":")
	switch Kind(strings.ToLower(kind)) {
	case KindPoisson:
		if hasArg {
			return Spec{}, badSpec(spec, "poisson takes no parameter")
		}
		return Spec{Kind: KindPoisson}, nil
	case KindConstant:
		if hasArg {
			return Spec{}, badSpec(spec, "constant takes no parameter")
		}
		return Spec{Kind: KindConstant}, nil
	case KindGamma:
		shape, err := parseGamma(arg)
		if err != nil {
			return Spec{}, badSpec(spec, err.Error())
		}
		return Spec{Kind: KindGamma, Shape: shape}, nil
	case KindTrace:
		path, scale, err := parseTrace(KindTrace, arg)
		if err != nil {
			return Spec{}, badSpec(spec, err.Error())
		}
		return Spec{Kind: KindTrace, Path: path, Scale: scale}, nil
	case kindIntervals:
		path, scale, err := parseTrace(kindIntervals, arg)
		if err != nil {
			return Spec{}, badSpec(spec, err.Error())
		}
		return Spec{Kind: KindTrace, Path: path, Scale: cmp.Or(scale, 1), Intervals: true}, nil
	case "":
		return Spec{}, badSpec(spec, "it is empty")
	}
	return Spec{}, badSpec(spec, fmt.Sprintf("%q is not an arrival process", kind))
}

func badSpec(spec, why string) error {
	return fmt.Errorf("%w %q: %s; %s", ErrBadSpec, spec, why, specHelp)
}

// parseGamma reads the shape of gamma:<shape>, gamma:shape=<k> or gamma:cv=<c>.
func parseGamma(arg string) (float64, error) {
	if arg == "" {
		return 0, errors.New("gamma needs a shape or a coefficient of variation")
	}
	key, val, named := strings.Cut(arg, "=")
	if !named {
		key, val = "shape", arg
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
	if err != nil || !(v > 0) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%s %q is not a positive number", strings.TrimSpace(key), val)
	}
	switch strings.ToLower(strings.TrimSpace(key)) {
	case "shape", "k":
		return v, nil
	case "cv":
		shape := 1 / (v * v)
		if !(shape > 0) || math.IsInf(shape, 0) {
			return 0, fmt.Errorf("cv %v gives no usable shape", v)
		}
		return shape, nil
	}
	return 0, fmt.Errorf("%q is not a gamma parameter (shape or cv)", key)
}

// parseTrace splits <file>[@<scale>]; an @ followed by something that is
// not a number belongs to the file name.
func parseTrace(kind Kind, arg string) (string, float64, error) {
	path, scale := arg, 0.0
	if i := strings.LastIndex(arg, "@"); i >= 0 {
		if v, err := strconv.ParseFloat(arg[i+1:], 64); err == nil {
			if !(v > 0) || math.IsInf(v, 0) {
				return "", 0, fmt.Errorf("rate scale %q is not a positive number", arg[i+1:])
			}
			path, scale = arg[:i], v
		}
	}
	if strings.TrimSpace(path) == "" {
		return "", 0, fmt.Errorf("%s needs a file", kind)
	}
	return path, scale, nil
}

// String writes the spec in the canonical form Parse reads.
func (s Spec) String() string {
	switch s.Kind {
	case KindGamma:
		return "gamma:shape=" + strconv.FormatFloat(s.Shape, 'g', -1, 64)
	case KindTrace:
		name := "trace:"
		if s.Intervals {
			name = string(kindIntervals) + ":"
			if s.Scale == 1 {
				return name + s.Path
			}
		}
		if s.Scale > 0 {
			return name + s.Path + "@" + strconv.FormatFloat(s.Scale, 'g', -1, 64)
		}
		return name + s.Path
	}
	return string(s.Kind)
}

// CV is the coefficient of variation of the gaps for Poisson, constant
// and Gamma processes, NaN for traces (see Trace.CV).
func (s Spec) CV() float64 {
	switch s.Kind {
	case KindPoisson:
		return 1
	case KindConstant:
		return 0
	case KindGamma:
		return 1 / math.Sqrt(s.Shape)
	}
	return math.NaN()
}

// ReadTrace decodes the file a KindTrace spec names: arrival times
// (ReadTrace), or the gaps between them (ReadIntervals).
func (s Spec) ReadTrace(r io.Reader) (*Trace, error) {
	if s.Intervals {
		return ReadIntervals(r)
	}
	return ReadTrace(r)
}
