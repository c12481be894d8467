// Package bytefmt writes byte counts for people: the daemon's messages, the
// command line's status and doctor reports, all in one form.
package bytefmt

import (
	"strconv"
	"strings"
)

// Size writes n bytes in the largest binary unit that keeps it at 1 or
// more, with one decimal where it has one ("512 B", "16 MiB", "3.5 GiB").
func Size(n int64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	v, i := float64(n), 0
	for v >= 1024 && i < len(units)-1 {
		v /= 1024
		i++
	}
	s := strconv.FormatFloat(v, 'f', 1, 64)
	s = strings.TrimSuffix(s, ".0")
	return s + " " + units[i]
}
