package repository

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/gpulet/gpuletd/internal/onnxfile"
)

// Digest is what identifies a model's bytes: profiles, plans and the
// executors' loads key on SHA256, and memory estimates start from Bytes.
type Digest struct {
	// SHA256 is the lowercase hex sha256 of the model file alone when it
	// holds all its tensors, which is the file's own sha256; of the file,
	// then each external data file in ExternalData's order with its name
	// and size, when some are kept outside. A new weights file therefore
	// changes it even when the model file stays the same.
	SHA256 string
	// Bytes is the size of the model file and its external data files.
	Bytes int64
	// ExternalData are the files beside the model file that an ONNX model
	// keeps tensors in, relative to its folder, sorted; none for most.
	ExternalData []string
}

// DigestFile hashes the model file at path of platform and, for an ONNX
// model that keeps tensors outside it, checks and hashes those files too:
// each must lie in the model file's folder (as ONNX Runtime requires), be
// there, and hold every byte its tensors read. The model file is read once.
func DigestFile(path, platform string) (Digest, error) {
	d, _, err := digestFile(path, platform)
	return d, err
}

// digestFile is DigestFile that also returns what stat said of each file
// read (the model file, then ExternalData's), just before it was read.
func digestFile(path, platform string) (Digest, []fileKey, error) {
	f, err := os.Open(path)
	if err != nil {
		return Digest{}, nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return Digest{}, nil, err
	}
	keys := []fileKey{keyOf(st)}
	h := sha256.New()
	cr := &countingReader{r: io.TeeReader(f, h)}
	var refs []onnxfile.ExternalRef
	if platform == PlatformONNX {
		// A file that does not parse has no external data this can see;
		// the inputs' reader says what is wrong with it.
		if facts, err := onnxfile.Scan(cr); err == nil {
			refs = facts.ExternalData
		}
	}
	if _, err := io.Copy(io.Discard, cr); err != nil {
		return Digest{}, nil, fmt.Errorf("hash model file: %w", err)
	}
	d := Digest{Bytes: cr.n}
	if len(refs) > 0 {
		if d.ExternalData, err = checkExternalData(filepath.Dir(path), refs); err != nil {
			return Digest{}, nil, err
		}
		for _, name := range d.ExternalData {
			n, key, err := hashExternal(h, filepath.Join(filepath.Dir(path), name), name)
			if err != nil {
				return Digest{}, nil, err
			}
			d.Bytes += n
			keys = append(keys, key)
		}
	}
	d.SHA256 = hex.EncodeToString(h.Sum(nil))
	return d, keys, nil
}

// checkExternalData checks the files refs name, in dir beside the model
// file, and returns their names, sorted and each once.
func checkExternalData(dir string, refs []onnxfile.ExternalRef) ([]string, error) {
	type use struct {
		first   string               // the first tensor kept in the file
		tensors int                  // how many are
		far     onnxfile.ExternalRef // the one that reads furthest into it
	}
	uses := map[string]*use{}
	for _, r := range refs {
		switch {
		case r.Location == "":
			return nil, fmt.Errorf("tensor %q is kept outside the file but its external_data names no file", r.Tensor)
		case !filepath.IsLocal(r.Location):
			return nil, fmt.Errorf("tensor %q is kept in %q, outside the model's folder: ONNX Runtime reads external data only from the model file's folder and below", r.Tensor, r.Location)
		}
		u := uses[r.Location]
		if u == nil {
			u = &use{first: r.Tensor, far: r}
			uses[r.Location] = u
		}
		u.tensors++
		if r.End > u.far.End {
			u.far = r
		}
	}
	var names []string
	for name, u := range uses {
		st, err := os.Stat(filepath.Join(dir, name))
		switch {
		case errors.Is(err, os.ErrNotExist):
			return nil, fmt.Errorf("keeps the weights of %d tensor(s) (%q first) in %s beside it, which is missing: copy it with the model file", u.tensors, u.first, name)
		case err != nil:
			return nil, fmt.Errorf("external data: %w", err)
		case !st.Mode().IsRegular():
			return nil, fmt.Errorf("external data %s is not a regular file", name)
		case st.Size() < u.far.End:
			return nil, fmt.Errorf("external data %s holds %d bytes, but tensor %q reads up to byte %d: the file is cut short or comes from another export of the model", name, st.Size(), u.far.Tensor, u.far.End)
		}
		names = append(names, name)
	}
	slices.Sort(names)
	return names, nil
}

// hashExternal adds an external data file to h after its name and size
// (so that moving bytes between two files changes the digest) and returns
// its size and what stat said of it before it was read.
func hashExternal(h hash.Hash, path, name string) (int64, fileKey, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, fileKey{}, fmt.Errorf("open external data %s: %w", name, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, fileKey{}, fmt.Errorf("external data %s: %w", name, err)
	}
	fmt.Fprintf(h, "\x00%s\x00%s\x00", name, strconv.FormatInt(st.Size(), 10))
	n, err := io.Copy(h, f)
	if err != nil {
		return 0, fileKey{}, fmt.Errorf("hash external data %s: %w", name, err)
	}
	return n, keyOf(st), nil
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
