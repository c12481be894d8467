package refset

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ConvertIgniter converts iGniter's JSON-lines profile into the reference
// format (the content of data/igniter-v100.ref).
func ConvertIgniter(r io.Reader, w io.Writer) error {
	src, err := ParseIgniter(r)
	if err != nil {
		return fmt.Errorf("convert igniter profile: %w", err)
	}
	return src.Encode(w)
}

// ConvertAlphaBeta converts a published α/β table for the named whole-GPU
// set into the reference format (the content of data/<set>.ref).
func ConvertAlphaBeta(r io.Reader, w io.Writer, set string) error {
	src, err := ParseAlphaBeta(r, set)
	if err != nil {
		return fmt.Errorf("convert %s table: %w", set, err)
	}
	return src.Encode(w)
}

// Convert converts the original file of the named set (its Meta.Origin,
// opened by the caller) into the reference format.
func Convert(set string, r io.Reader, w io.Writer) error {
	meta, ok := catalog[set]
	if !ok {
		return fmt.Errorf("convert %q: %w", set, ErrUnknownSet)
	}
	if IsMeasuredOrigin(meta.Origin) {
		return ConvertMeasured(r, w, set)
	}
	if meta.Partitioning == PartitionMPS {
		return ConvertIgniter(r, w)
	}
	if strings.HasPrefix(meta.Origin, "loki/") {
		src, err := ParseLokiRuntimes(r, set)
		if err != nil {
			return fmt.Errorf("convert %s runtimes: %w", set, err)
		}
		return src.Encode(w)
	}
	return ConvertAlphaBeta(r, w, set)
}

// ConvertFS converts a set whose origin is a folder (ParvaGPU's profiles,
// one file per model), opened by the caller as fsys, into the reference
// format.
func ConvertFS(set string, fsys fs.FS, w io.Writer) error {
	meta, ok := catalog[set]
	if !ok || meta.Partitioning != PartitionMIG {
		return fmt.Errorf("convert folder of %q: %w", set, ErrUnknownSet)
	}
	src, err := ParseParvaGPU(fsys, set)
	if err != nil {
		return fmt.Errorf("convert %s profiles: %w", set, err)
	}
	return src.Encode(w)
}

// ConvertOrigin converts the set's origin at path, a file (Convert) or a
// folder (ConvertFS), into the reference format.
func ConvertOrigin(set, path string, w io.Writer) error {
	st, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("convert %s: %w", set, err)
	}
	if st.IsDir() {
		return ConvertFS(set, os.DirFS(path), w)
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("convert %s: %w", set, err)
	}
	defer f.Close()
	return Convert(set, f, w)
}

// measuredDir is the folder of this package that holds measured origins.
const measuredDir = "measured/"

// IsMeasuredOrigin reports whether a set's origin is a campaign's
// measurements kept in this package (measured/…) rather than a file of the
// shared data folder.
func IsMeasuredOrigin(origin string) bool { return strings.HasPrefix(origin, measuredDir) }

// OriginFile is the file of a set's origin: under shared (the shared data
// folder) or, for measurements, under local (this package's folder).
func OriginFile(origin, shared, local string) string {
	if IsMeasuredOrigin(origin) {
		return filepath.Join(local, origin)
	}
	return filepath.Join(shared, origin)
}

// OriginPath is where a set's origin lies, relative to the repository root's
// parent for shared data ("../shared/data/…") and to the repository root for
// measurements ("profiler/refset/measured/…").
func OriginPath(origin string) string {
	if IsMeasuredOrigin(origin) {
		return "profiler/refset/" + origin
	}
	return "../shared/data/" + origin
}
