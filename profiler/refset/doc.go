// Package refset provides reference profile sets: named, importable sets of
// real measurements (iGniter's V100 under MPS) and published tables (Symphony's
// A100 and 1080 Ti, SHEPHERD's V100) that the planner, the simulator, the
// emulated engine and the store use as emulated device types.
//
// The sources are converted once into a compact text format of this package
// (data/*.ref, embedded in the binary), so gpuletd never needs the original
// files; the converters (ParseIgniter, ParseAlphaBeta, Source.Encode) are
// exported and the embedded files are checked against a fresh conversion of
// the originals whenever they are present (go generate rewrites them).
//
// Load builds a Set: one gpulet.Profile per model, with points the sources
// lack filled by a stated, held-out-tested method (see fill.go), an SLO where
// the source gives one, a memory footprint estimate (memory.go) and, for
// iGniter, the measured co-locations. Physics answers solo and co-located
// latencies for emulated devices.
package refset
