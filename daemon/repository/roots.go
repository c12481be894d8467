package repository

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Roots are the model repositories read as one, in the order configured
// (model_repository, then extra_model_repositories; Triton's repeated
// --model-repository). A model folder is read from the one repository that
// holds it; a folder name held by more than one is served from none, as
// Triton serves a name that is not unique across its repositories from
// none, and says which hold it.
type Roots []string

// ErrInSeveralRepositories marks a model folder name that more than one of
// the repositories holds.
var ErrInSeveralRepositories = errors.New("model folder in more than one model repository")

// Holders lists the repositories that hold a folder (or a link to one)
// named name, in order.
func (r Roots) Holders(name string) []string {
	var out []string
	for _, root := range r {
		if st, err := os.Stat(filepath.Join(root, name)); err == nil && st.IsDir() {
			out = append(out, root)
		}
	}
	return out
}

// Locate returns the repository that holds the model folder name: an error
// wrapping ErrNotFound when none does, and one wrapping ErrInvalidModel and
// ErrInSeveralRepositories when more than one does.
func (r Roots) Locate(name string) (string, error) {
	held := r.Holders(name)
	switch len(held) {
	case 0:
		return "", fmt.Errorf("load model %q from %s: %w", name, r, ErrNotFound)
	case 1:
		return held[0], nil
	}
	return "", r.several(name, held)
}

// several is the problem of the folder name that the repositories held
// all hold.
func (r Roots) several(name string, held []string) error {
	paths := make([]string, len(held))
	for i, root := range held {
		paths[i] = filepath.Join(root, name)
	}
	return fmt.Errorf("%w: %w: %s: a model name must be unique across the model repositories (model_repository, extra_model_repositories), and one that is not is served from none of them, as Triton does; rename or remove all but one",
		ErrInvalidModel, ErrInSeveralRepositories, strings.Join(paths, " and "))
}

// Folder is a model folder name and the repositories that hold it.
type Folder struct {
	Name    string
	Holders []string
}

// Folders lists the model folders of the repositories (folders and links
// to folders, not hidden), each name once in the order first found, and
// apart each symbolic link that leads nowhere by its name (the first
// found). It fails only when a repository cannot be read.
func (r Roots) Folders() (folders []Folder, dangling map[string]error, err error) {
	at := map[string]int{} // name: its index in folders
	dangling = map[string]error{}
	for _, root := range r {
		entries, err := os.ReadDir(root)
		if err != nil {
			return nil, nil, fmt.Errorf("read model repository %s: %w", root, err)
		}
		for _, e := range entries {
			name := e.Name()
			if name[0] == '.' {
				continue
			}
			if err := danglingLink(root, e); err != nil {
				if _, ok := dangling[name]; !ok {
					dangling[name] = err
				}
				continue
			}
			if !IsFolder(root, e) {
				continue
			}
			i, ok := at[name]
			if !ok {
				i, at[name] = len(folders), len(folders)
				folders = append(folders, Folder{Name: name})
			}
			folders[i].Holders = append(folders[i].Holders, root)
		}
	}
	return folders, dangling, nil
}

// String lists the repositories, joined with " and ".
func (r Roots) String() string { return strings.Join(r, " and ") }
