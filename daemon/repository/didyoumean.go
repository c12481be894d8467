package repository

import (
	"github.com/gpulet/gpuletd/internal/configerr"
)

// DidYouMean is " (did you mean X?)" when name, which the repositories do
// not hold, is a likely misspelling of one of their model folders; else ""
// (none, two alike, or no repository that can be read).
func (r Roots) DidYouMean(name string) string {
	known := map[string]string{}
	for _, root := range r {
		folders, _, err := Roots{root}.Folders() // one that cannot be read offers none
		if err != nil {
			continue
		}
		for _, f := range folders {
			known[f.Name] = f.Name
		}
	}
	return configerr.DidYouMean(name, known)
}
