// Package version holds gpuletd's version, set at build time with -ldflags.
package version

import "runtime/debug"

// Set by the Makefile: -X github.com/gpulet/gpuletd/internal/version.Version=...
var (
	// Version is the release or git describe output.
	Version = "dev"
	// Commit is the short git commit.
	Commit = "unknown"
)

// String is "gpuletd <version> (<commit>, <go version>)".
func String() string {
	gov := "go?"
	if bi, ok := debug.ReadBuildInfo(); ok {
		gov = bi.GoVersion
	}
	return "gpuletd " + Version + " (" + Commit + ", " + gov + ")"
}
