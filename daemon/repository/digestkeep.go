package repository

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
)

// A DigestCache's entries outlive the process through a keeper (the
// daemon's database): Keep has every digest computed handed to it, and
// Restore takes back what it kept, so that a restart reads no unchanged
// model file to find its sha256.

// KeptDigest is one entry of a DigestCache as a keeper stores it: the model
// file and platform it is for, and Entry, the digest and what stat said of
// its files, in the cache's own encoding.
type KeptDigest struct {
	Path, Platform string
	Entry          []byte
}

// keptEntry is a cachedDigest's encoding.
type keptEntry struct {
	SHA256       string    `json:"sha256"`
	Bytes        int64     `json:"bytes"`
	ExternalData []string  `json:"external_data,omitempty"`
	Keys         []keptKey `json:"keys"`
}

// keptKey is a fileKey's encoding.
type keptKey struct {
	Dev   uint64 `json:"dev"`
	Ino   uint64 `json:"ino"`
	Size  int64  `json:"size"`
	Mtime int64  `json:"mtime"`
	Ctime int64  `json:"ctime"`
}

// Keep has keep called with every digest the cache computes from now on
// (outside the cache's lock, in the caller's goroutine).
func (c *DigestCache) Keep(keep func(KeptDigest)) {
	c.mu.Lock()
	c.keep = keep
	c.mu.Unlock()
}

// Restore adds kept entries to the cache. An entry is used only while its
// files stat as they did when it was computed, like any other. Entries that
// do not decode are left out and named in the error; the others are
// restored.
func (c *DigestCache) Restore(kept []KeptDigest) error {
	var errs []error
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, k := range kept {
		var e keptEntry
		if err := json.Unmarshal(k.Entry, &e); err != nil || e.SHA256 == "" || len(e.Keys) != 1+len(e.ExternalData) {
			errs = append(errs, fmt.Errorf("restore digest of %s: entry %.80q does not decode", k.Path, k.Entry))
			continue
		}
		cd := cachedDigest{d: Digest{SHA256: e.SHA256, Bytes: e.Bytes, ExternalData: slices.Clone(e.ExternalData)}}
		for _, key := range e.Keys {
			cd.keys = append(cd.keys, fileKey{dev: key.Dev, ino: key.Ino, size: key.Size, mtime: key.Mtime, ctime: key.Ctime})
		}
		c.entries[cacheID(k.Path, k.Platform)] = cd
	}
	return errors.Join(errs...)
}

// keptOf is e, computed for path and platform, as a keeper stores it.
func keptOf(path, platform string, e cachedDigest) KeptDigest {
	ke := keptEntry{SHA256: e.d.SHA256, Bytes: e.d.Bytes, ExternalData: e.d.ExternalData}
	for _, k := range e.keys {
		ke.Keys = append(ke.Keys, keptKey{Dev: k.dev, Ino: k.ino, Size: k.size, Mtime: k.mtime, Ctime: k.ctime})
	}
	b, _ := json.Marshal(ke) // plain strings and numbers: cannot fail
	return KeptDigest{Path: path, Platform: platform, Entry: b}
}
