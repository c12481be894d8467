package refset

import (
	"errors"
	"fmt"
	"strings"
)

// ErrFormat is wrapped by every error about a malformed, corrupt or truncated
// reference file; the message names the file, the line and the problem.
var ErrFormat = errors.New("malformed reference data")

// Partitioning modes of a set.
const (
	PartitionMPS  = "mps"  // MPS active-thread percentages
	PartitionNone = "none" // whole GPUs only
	PartitionMIG  = "mig"  // MIG instances, with MPS processes inside
)

// Meta describes a reference set: where it comes from and the device it
// stands for.
type Meta struct {
	Name         string  // set name, e.g. "igniter-v100"
	GPU          string  // the GPU the data was measured on, with its memory
	Origin       string  // the source file, relative to the shared data folder
	Citation     string  // who measured or published it, and where (paper, table)
	Partitioning string  // PartitionMPS, PartitionNone or PartitionMIG
	Sizes        []int   // allowed gpu-let sizes, percent, ascending
	MemoryGiB    float64 // device memory of the GPU
	MaxBatch     int     // largest batch the set covers
}

// ModelName is a model as the source names it and under the name the set
// uses (lowercase, see canonicalName).
type ModelName struct {
	Name  string
	Label string
}

// SourcePoint is one measured solo operating point. Unknown utilisations are
// NaN.
type SourcePoint struct {
	Model     string
	Batch     int
	Size      int
	LatencyMS float64
	L2        float64 // L2 cache utilisation, percent
	DRAM      float64 // DRAM bandwidth utilisation, percent
}

// LinearModel is a published whole-GPU batch latency ℓ(b) = α·b + β.
type LinearModel struct {
	Model   string
	AlphaMS float64
	BetaMS  float64
	SLOMS   float64 // 0 when the source gives no SLO
}

// CoLocation is one measured co-location of two models on two gpu-lets of
// one GPU: Model1 runs batches of Batch1 on Size1 percent while Model2 runs
// batches of Batch2 on Size2 percent; LatencyNMS is the mean latency of model
// N's batch while co-located and StdNMS its standard deviation.
type CoLocation struct {
	Model1, Model2         string
	Batch1, Batch2         int
	Size1, Size2           int
	Latency1MS, Latency2MS float64
	Std1MS, Std2MS         float64
}

// Source is a reference set as read from its original file, before any
// filling or derivation.
type Source struct {
	Meta   Meta
	Models []ModelName
	Points []SourcePoint
	Linear []LinearModel
	Pairs  []CoLocation
	// Segments are MIG instances measured with MPS processes inside
	// (PartitionMIG sets).
	Segments []SegmentPoint
}

// canonicalName lowercases a source's model name and replaces every run of
// characters other than a-z, 0-9, '.', '_' and '-' by one '-', so names are
// the same across sets ("ResNet50" and "resnet50") and safe in YAML, URLs and
// the store ("Inception v3" → "inception-v3").
func canonicalName(label string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(strings.TrimSpace(label)) {
		ok := (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') || r == '.' || r == '_' || r == '-'
		if ok {
			b.WriteRune(r)
			dash = false
		} else if !dash {
			b.WriteByte('-')
			dash = true
		}
	}
	return strings.Trim(b.String(), "-")
}

// formatErr builds an ErrFormat error naming the file and line.
func formatErr(file string, line int, format string, args ...any) error {
	return fmt.Errorf("read %s line %d: %w: %s", file, line, ErrFormat, fmt.Sprintf(format, args...))
}
