package repository

import (
	"os"
	"strings"

	"github.com/gpulet/gpuletd/internal/configerr"
)

// DidYouMean is " (did you mean X?)" when name, which the repositories do
// not hold, is a likely misspelling of one of their model folders; else ""
// (none, two alike, or no repository that can be read).
func (r Roots) DidYouMean(name string) string {
	known := map[string]string{}
	for _, root := range r {
		entries, err := os.ReadDir(root)
		if err != nil {
			continue
		}
		for _, e := range entries {
			if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
				known[e.Name()] = e.Name()
			}
		}
	}
	return configerr.DidYouMean(name, known)
}
