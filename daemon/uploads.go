package daemon

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// uploadPrefix starts a repository load request's parameter that carries a
// file of the model folder (Triton's file override): "file:1/model.onnx".
const uploadPrefix = "file:"

// The folders of a model folder besides its versions, as Triton has them:
// a stateful model's initial states, and model_warmup's input data (read
// by no one here, but part of a Triton folder).
const (
	initialStateFolder = "initial_state"
	warmupFolder       = "warmup"
)

// errUploadPath is a file override whose path is not a file of a model
// folder gpuletd takes.
var errUploadPath = errors.New("not a file in a version folder")

// uploadPath checks a file override's path, relative to the model folder:
// a version folder (a number), then a file in it or below it, with '/'
// between; or a file beside the version folders (a label file). The
// model's configuration comes in the config parameter, never as a file.
func uploadPath(p string) (string, error) {
	if !filepath.IsLocal(p) || path.Clean(p) != p || strings.Contains(p, `\`) || strings.HasSuffix(p, "/") {
		return "", fmt.Errorf("file override %q: %w (such as 1/model.onnx)", p, errUploadPath)
	}
	version, _, inFolder := strings.Cut(p, "/")
	if !inFolder {
		if p == "config.pbtxt" || p == "config.yaml" {
			return "", fmt.Errorf("file override %q: %w: the configuration comes in the config parameter, as JSON", p, errUploadPath)
		}
		return p, nil // beside the version folders: a label file
	}
	if version == initialStateFolder || version == warmupFolder {
		return filepath.FromSlash(p), nil // a stateful model's initial states; model_warmup's data
	}
	if n, err := strconv.ParseUint(version, 10, 63); err != nil || strconv.FormatUint(n, 10) != version {
		return "", fmt.Errorf("file override %q: %w: %q is not a version number (nor %s/ or %s/, Triton's folders of initial states and warm-up data)",
			p, errUploadPath, version, initialStateFolder, warmupFolder)
	}
	return filepath.FromSlash(p), nil
}

// uploads keeps the model folders that repository load requests brought as
// file overrides, under the state directory, one folder tree per load:
// <dir>/<model>.<n>/<model>/<version>/<file>. As in Triton such a model
// serves until it is unloaded, loaded again from the repository, or the
// daemon restarts: the folder is not part of the repository and start
// clears it.
type uploads struct {
	dir string

	mu   sync.Mutex
	next int
}

// newUploads empties dir (what an earlier run uploaded) and returns the
// store that writes there.
func newUploads(dir string) (*uploads, error) {
	if err := os.RemoveAll(dir); err != nil {
		return nil, fmt.Errorf("clear uploaded models %s: %w", dir, err)
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("create uploaded models %s: %w", dir, err)
	}
	return &uploads{dir: dir}, nil
}

// write writes model's files (paths checked by uploadPath) into a folder
// tree of their own and returns its root, which holds the folder model as
// a repository would. Nothing is left behind when a write fails (a full
// disk): the model serves as it did.
func (u *uploads) write(model string, files map[string][]byte) (string, error) {
	if !filepath.IsLocal(model) || strings.ContainsAny(model, `/\`) || strings.Trim(model, ".") == "" {
		return "", fmt.Errorf("write uploaded files: model name %q is not a folder name", model)
	}
	u.mu.Lock()
	u.next++
	root := filepath.Join(u.dir, model+"."+strconv.Itoa(u.next))
	u.mu.Unlock()
	for p, data := range files {
		f := filepath.Join(root, model, p)
		err := os.MkdirAll(filepath.Dir(f), 0o750)
		if err == nil {
			err = os.WriteFile(f, data, 0o640)
		}
		if err != nil {
			_ = os.RemoveAll(root)
			return "", fmt.Errorf("write uploaded file %s: %w", filepath.ToSlash(p), err)
		}
	}
	return root, nil
}

// drop removes a folder tree write returned; "" is none.
func (u *uploads) drop(root string) {
	if u != nil && root != "" && filepath.Dir(root) == u.dir {
		_ = os.RemoveAll(root)
	}
}
