package repository

import (
	"os"
	"strings"

	"github.com/gpulet/gpuletd/internal/configerr"
)

// DidYouMean is " (did you mean X?)" when name, which the repository at
// root does not hold, is a likely misspelling of one of its model folders;
// else "" (none, two alike, or a repository that cannot be read).
func DidYouMean(root, name string) string {
	entries, err := os.ReadDir(root)
	if err != nil {
		return ""
	}
	known := map[string]string{}
	for _, e := range entries {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			known[e.Name()] = e.Name()
		}
	}
	return configerr.DidYouMean(name, known)
}
