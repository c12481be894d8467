package repository

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
)

// DigestCache remembers model files' digests by what stat says of each file
// a digest read, so that reading an unchanged repository again (the
// repository index, a reload) reads no model file again. A file written,
// replaced or touched since changes its status change time, and its digest
// is computed again. It is safe for concurrent use; the zero value is not:
// use NewDigestCache.
type DigestCache struct {
	mu       sync.Mutex
	entries  map[string]cachedDigest // by cacheID
	computed int                     // digests computed, not answered from entries
	keep     func(KeptDigest)        // Keep's
	// sums are files' MD5 digests (the checksum agent's), by path.
	sums map[string]cachedSum
}

// cachedSum is one file's MD5 digest and the file's key when read.
type cachedSum struct {
	sum string
	key fileKey
}

// MD5 is FileMD5, answered from the cache while the file is as it was when
// last read.
func (c *DigestCache) MD5(path string) (string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	c.mu.Lock()
	e, ok := c.sums[path]
	c.mu.Unlock()
	if ok && e.key == keyOf(st) {
		return e.sum, nil
	}
	sum, err := FileMD5(path)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.computed++
	if err != nil {
		delete(c.sums, path)
		return "", err
	}
	if c.sums == nil {
		c.sums = map[string]cachedSum{}
	}
	c.sums[path] = cachedSum{sum: sum, key: keyOf(st)}
	return sum, nil
}

// cacheID is the entries' key for a model file's path and platform.
func cacheID(path, platform string) string { return platform + "\x00" + path }

// cachedDigest is one model file's digest and its files' keys when read.
type cachedDigest struct {
	d    Digest
	keys []fileKey // the model file's, then each of d.ExternalData's
}

// fileKey is what stat says of a file that changes whenever its bytes may
// have: device, inode, size, modification and status change times.
type fileKey struct {
	dev, ino           uint64
	size, mtime, ctime int64
}

// keyOf is st's key.
func keyOf(st os.FileInfo) fileKey {
	k := fileKey{size: st.Size(), mtime: st.ModTime().UnixNano()}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		k.dev, k.ino, k.ctime = uint64(sys.Dev), sys.Ino, sys.Ctim.Nano()
	}
	return k
}

// FileStamp is keyOf(st) as text: what the repository watch prints of a
// file, to tell whether it changed since the last look.
func FileStamp(st os.FileInfo) string {
	k := keyOf(st)
	return fmt.Sprintf("%d:%d %d %d %d", k.dev, k.ino, k.size, k.mtime, k.ctime)
}

// NewDigestCache returns an empty cache.
func NewDigestCache() *DigestCache {
	return &DigestCache{entries: map[string]cachedDigest{}}
}

// Digest is DigestFile, answered from the cache while the model file and
// its external data files are as they were when last read.
func (c *DigestCache) Digest(path, platform string) (Digest, error) {
	id := cacheID(path, platform)
	c.mu.Lock()
	e, ok := c.entries[id]
	c.mu.Unlock()
	if ok && c.unchanged(path, e) {
		e.d.ExternalData = slices.Clone(e.d.ExternalData)
		return e.d, nil
	}
	d, keys, err := digestFile(path, platform)
	c.mu.Lock()
	c.computed++
	if err != nil {
		delete(c.entries, id)
		c.mu.Unlock()
		return Digest{}, err
	}
	e = cachedDigest{d: d, keys: keys}
	c.entries[id] = e
	keep := c.keep
	c.mu.Unlock()
	if keep != nil {
		keep(keptOf(path, platform, e))
	}
	d.ExternalData = slices.Clone(d.ExternalData)
	return d, nil
}

// Computed is how many digests the cache computed, reading files, rather
// than answered from what it holds.
func (c *DigestCache) Computed() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.computed
}

// unchanged says whether every file e read still stats as it did.
func (c *DigestCache) unchanged(path string, e cachedDigest) bool {
	files := append([]string{path}, e.d.ExternalData...)
	if len(files) != len(e.keys) {
		return false
	}
	for i, f := range files {
		if i > 0 {
			f = filepath.Join(filepath.Dir(path), f)
		}
		st, err := os.Stat(f)
		if err != nil || keyOf(st) != e.keys[i] {
			return false
		}
	}
	return true
}
