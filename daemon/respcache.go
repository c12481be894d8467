package daemon

import (
	"container/list"
	"encoding/binary"
	"hash/maphash"
	"slices"
	"sync"

	"github.com/gpulet/gpuletd/daemon/repository"
	"github.com/gpulet/gpuletd/executor/tensor"
)

// The response cache (Triton's response_cache): a model whose configuration
// enables it is answered from the answers of earlier identical requests,
// without a gpu-let, while the node keeps a cache (response_cache.size).
// Identical means the same load of the model (a model loaded again, with
// another file or configuration, never answers from an older load's
// entries, which age out), the same inputs (names, data types, shapes and
// bytes) and the same outputs asked for. A pipeline's answer also names the
// loads of the models its steps ran, and is answered only while each of
// them is still the one served. Only successful answers are kept; the
// least recently used go first when the byte budget is spent.

// cacheEntryOverhead is what one entry costs beside its tensors' bytes (the
// key, the list element, the tensors' headers), counted in its size so that
// many tiny answers cannot outgrow the budget.
const cacheEntryOverhead = 256

// cacheKey is 128 bits of hash over a request (two seeds of maphash).
type cacheKey [2]uint64

// cacheEntry is one answer kept.
type cacheEntry struct {
	key   cacheKey
	model *repository.Model   // the load that answered
	ran   []*repository.Model // a pipeline's answer: the loads its steps ran
	outs  []tensor.Tensor
	emul  bool
	bytes int64
}

// responseCache is the node's response cache. The zero value is not used;
// newResponseCache makes one.
type responseCache struct {
	seeds [2]maphash.Seed

	mu        sync.Mutex
	budget    int64 // bytes; 0: caching off
	used      int64
	entries   map[cacheKey]*list.Element
	lru       list.List // front: most recently used
	evictions int64
}

func newResponseCache(budget int64) *responseCache {
	return &responseCache{seeds: [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()},
		budget: budget, entries: map[cacheKey]*list.Element{}}
}

// on tells whether the cache keeps anything.
func (c *responseCache) on() bool {
	if c == nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.budget > 0
}

// key hashes a request of m: its model's name and version, its inputs in
// name order and the outputs it asks for (none: all).
func (c *responseCache) key(m *repository.Model, inputs []tensor.Tensor, outputs []string) cacheKey {
	ins := slices.Clone(inputs)
	slices.SortFunc(ins, func(a, b tensor.Tensor) int {
		switch {
		case a.Name < b.Name:
			return -1
		case a.Name > b.Name:
			return 1
		}
		return 0
	})
	outs := slices.Sorted(slices.Values(outputs))
	var k cacheKey
	for i, seed := range c.seeds {
		var h maphash.Hash
		h.SetSeed(seed)
		writeString(&h, m.Name)
		writeInt(&h, int64(m.Version))
		writeInt(&h, int64(len(ins)))
		for _, t := range ins {
			writeString(&h, t.Name)
			writeString(&h, string(t.DataType))
			writeInt(&h, int64(len(t.Shape)))
			for _, d := range t.Shape {
				writeInt(&h, d)
			}
			writeInt(&h, int64(len(t.Data)))
			_, _ = h.Write(t.Data)
		}
		writeInt(&h, int64(len(outs)))
		for _, o := range outs {
			writeString(&h, o)
		}
		k[i] = h.Sum64()
	}
	return k
}

// writeString and writeInt write length-delimited values, so that no two
// requests hash the same bytes.
func writeString(h *maphash.Hash, s string) {
	writeInt(h, int64(len(s)))
	_, _ = h.WriteString(s)
}

func writeInt(h *maphash.Hash, v int64) {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(v))
	_, _ = h.Write(b[:])
}

// get returns the answer kept for key from model m's load, if any, and
// only while served says that every load a pipeline's answer ran is still
// the one served. The tensors share their bytes with the entry: callers
// only read them.
func (c *responseCache) get(key cacheKey, m *repository.Model, served func(*repository.Model) bool) ([]tensor.Tensor, bool, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.entries[key]
	if !ok {
		return nil, false, false
	}
	e := el.Value.(*cacheEntry)
	if e.model != m || slices.ContainsFunc(e.ran, func(r *repository.Model) bool { return !served(r) }) {
		c.removeLocked(el) // an older load's: never answered again
		return nil, false, false
	}
	c.lru.MoveToFront(el)
	outs := make([]tensor.Tensor, len(e.outs))
	for i, t := range e.outs {
		t.Shape = slices.Clone(t.Shape)
		outs[i] = t
	}
	return outs, e.emul, true
}

// put keeps an answer of model m's load for key, copying its bytes, with the
// loads a pipeline's steps ran for it (ran); an answer larger than the whole
// budget is not kept.
func (c *responseCache) put(key cacheKey, m *repository.Model, outs []tensor.Tensor, emulated bool, ran []*repository.Model) {
	size := int64(cacheEntryOverhead)
	for _, t := range outs {
		size += int64(len(t.Data) + len(t.Name) + 8*len(t.Shape))
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if size > c.budget {
		return
	}
	if el, ok := c.entries[key]; ok {
		c.removeLocked(el)
	}
	kept := make([]tensor.Tensor, len(outs))
	for i, t := range outs {
		kept[i] = tensor.Tensor{Name: t.Name, DataType: t.DataType, Shape: slices.Clone(t.Shape), Data: slices.Clone(t.Data)}
	}
	c.entries[key] = c.lru.PushFront(&cacheEntry{key: key, model: m, ran: ran, outs: kept, emul: emulated, bytes: size})
	c.used += size
	c.trimLocked()
}

// resize sets the byte budget, dropping the least recently used entries
// beyond it (all of them at 0).
func (c *responseCache) resize(budget int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.budget = budget
	c.trimLocked()
}

func (c *responseCache) trimLocked() {
	for c.used > c.budget {
		c.removeLocked(c.lru.Back())
		c.evictions++
	}
}

func (c *responseCache) removeLocked(el *list.Element) {
	e := c.lru.Remove(el).(*cacheEntry)
	delete(c.entries, e.key)
	c.used -= e.bytes
}

// cacheUsage is what the cache holds, for the metrics and the status.
type cacheUsage struct {
	Budget    int64 `json:"budget_bytes"`
	Bytes     int64 `json:"bytes"`
	Entries   int64 `json:"entries"`
	Evictions int64 `json:"evictions"`
}

func (c *responseCache) usage() cacheUsage {
	c.mu.Lock()
	defer c.mu.Unlock()
	return cacheUsage{Budget: c.budget, Bytes: c.used, Entries: int64(len(c.entries)), Evictions: c.evictions}
}
