package daemon

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/gpulet/gpuletd/daemon/repository"
	"github.com/gpulet/gpuletd/executor/tensor"
	"github.com/gpulet/gpuletd/kserve"
)

func fp32(name string, shape []int64, data ...byte) tensor.Tensor {
	return tensor.Tensor{Name: name, DataType: tensor.FP32, Shape: shape, Data: data}
}

// Two requests share a key exactly when they are the same request: the
// same model and version, inputs (in any order) and outputs asked for.
func TestResponseCacheKey(t *testing.T) {
	c := newResponseCache(1 << 20)
	m := &repository.Model{Name: "m", Version: 1}
	x, y := fp32("x", []int64{1, 1}, 1, 2, 3, 4), fp32("y", []int64{1, 1}, 5, 6, 7, 8)
	base := c.key(m, []tensor.Tensor{x, y}, []string{"a", "b"})
	require.Equal(t, base, c.key(m, []tensor.Tensor{y, x}, []string{"b", "a"}), "order does not matter")
	differ := map[string]cacheKey{
		"data":      c.key(m, []tensor.Tensor{x, fp32("y", []int64{1, 1}, 5, 6, 7, 9)}, []string{"a", "b"}),
		"shape":     c.key(m, []tensor.Tensor{x, fp32("y", []int64{1}, 5, 6, 7, 8)}, []string{"a", "b"}),
		"name":      c.key(m, []tensor.Tensor{x, fp32("z", []int64{1, 1}, 5, 6, 7, 8)}, []string{"a", "b"}),
		"data type": c.key(m, []tensor.Tensor{x, {Name: "y", DataType: tensor.Int32, Shape: []int64{1, 1}, Data: y.Data}}, []string{"a", "b"}),
		"outputs":   c.key(m, []tensor.Tensor{x, y}, []string{"a"}),
		"all":       c.key(m, []tensor.Tensor{x, y}, nil),
		"version":   c.key(&repository.Model{Name: "m", Version: 2}, []tensor.Tensor{x, y}, []string{"a", "b"}),
		"model":     c.key(&repository.Model{Name: "n", Version: 1}, []tensor.Tensor{x, y}, []string{"a", "b"}),
		// The bytes move from one input to the next: lengths delimit them.
		"boundary": c.key(m, []tensor.Tensor{fp32("x", []int64{1, 1}, 1, 2, 3, 4, 5), fp32("y", []int64{1, 1}, 6, 7, 8)}, []string{"a", "b"}),
	}
	seen := map[cacheKey]string{base: "base"}
	for what, k := range differ {
		require.NotContains(t, seen, k, "%s hashes like %s", what, seen[k])
		seen[k] = what
	}
}

// allServed says every load is still served: entries of models alone name
// no other loads.
func allServed(*repository.Model) bool { return true }

func TestResponseCacheKeepsAndEvicts(t *testing.T) {
	m := &repository.Model{Name: "m", Version: 1}
	answer := func(b byte) []tensor.Tensor { return []tensor.Tensor{fp32("out", []int64{1, 4}, b, b, b, b)} }
	size := int64(cacheEntryOverhead + 4 + len("out") + 16) // one answer's bytes
	c := newResponseCache(3 * size)
	key := func(b byte) cacheKey { return c.key(m, []tensor.Tensor{fp32("x", []int64{1}, b)}, nil) }

	out := answer(1)
	c.put(key(1), m, out, true, nil)
	out[0].Data[0] = 99 // the caller's buffer is reused: the entry holds a copy
	got, emulated, ok := c.get(key(1), m, allServed)
	require.True(t, ok)
	require.True(t, emulated)
	require.Equal(t, answer(1), got)
	got[0].Shape[0] = 7 // an answer's shape changed by its reader leaves the entry alone
	got, _, _ = c.get(key(1), m, allServed)
	require.Equal(t, answer(1), got)

	c.put(key(2), m, answer(2), false, nil)
	c.put(key(3), m, answer(3), false, nil)
	require.Equal(t, cacheUsage{Budget: 3 * size, Bytes: 3 * size, Entries: 3}, c.usage())
	_, _, _ = c.get(key(1), m, allServed) // 1 is now the most recently used: 2 goes first
	c.put(key(4), m, answer(4), false, nil)
	_, _, ok = c.get(key(2), m, allServed)
	require.False(t, ok, "the least recently used answer was dropped")
	for _, b := range []byte{1, 3, 4} {
		got, _, ok := c.get(key(b), m, allServed)
		require.True(t, ok, "answer %d", b)
		require.Equal(t, answer(b), got)
	}
	require.Equal(t, int64(1), c.usage().Evictions)

	// Another load of the model (a new file, a new configuration) never
	// answers from the old one's entries, which go.
	reloaded := &repository.Model{Name: "m", Version: 1}
	_, _, ok = c.get(key(1), reloaded, allServed)
	require.False(t, ok)
	require.Equal(t, int64(2), c.usage().Entries)

	// An answer larger than the whole budget is not kept.
	c.put(key(5), m, []tensor.Tensor{fp32("out", []int64{1}, make([]byte, 3*size)...)}, false, nil)
	_, _, ok = c.get(key(5), m, allServed)
	require.False(t, ok)

	c.resize(size)
	require.Equal(t, cacheUsage{Budget: size, Bytes: size, Entries: 1, Evictions: 2}, c.usage())
	c.resize(0)
	require.Equal(t, int64(0), c.usage().Entries)
	require.False(t, c.on())
}

// A hit is answered without a gpu-let and leaves the model's planned rate;
// a miss that fails is not kept.
func TestExecuteAnswersFromTheCache(t *testing.T) {
	n := &node{log: zap.NewNop(), router: newRouter(), rates: newRateMeter(0.5, time.Now()),
		cache: newResponseCache(1 << 20), catalog: newCatalog([]string{t.TempDir()}, testRepositoryOptions(0), nil, nil, zap.NewNop())}
	n.metrics = newMetrics(n)
	m := askModel()
	m.Config.ResponseCache = true
	req := &kserve.Request{Inputs: []tensor.Tensor{fp32("x", []int64{1, 4}, make([]byte, 16)...)}}

	n.rates.hit(m.Name, time.Now()) // at the door
	_, ierr := n.execute(context.Background(), m, req, time.Now())
	require.NotNil(t, ierr, "no gpu-let serves it")
	require.Equal(t, reasonUnroutable, ierr.reason)
	c := n.counters.of(m.Name)
	require.Equal(t, int64(1), c.cacheMiss.count.Load())
	require.Equal(t, int64(0), n.cache.usage().Entries, "a failure is not kept")

	want := []tensor.Tensor{fp32("scores", []int64{1, 2, 5}, make([]byte, 40)...)}
	n.cache.put(n.cache.key(m, req.Inputs, nil), m, want, false, nil)
	n.rates.hit(m.Name, time.Now())
	res, ierr := n.execute(context.Background(), m, req, time.Now())
	require.Nil(t, ierr)
	require.True(t, res.cached)
	require.Zero(t, res.batch)
	require.Equal(t, want, res.outs)
	require.Equal(t, int64(1), c.cacheHit.count.Load())
	require.Equal(t, int64(1), n.rates.counted(m.Name), "the hit left the planned rate")

	// A model that does not enable the cache never reads it.
	m.Config.ResponseCache = false
	_, ierr = n.execute(context.Background(), m, req, time.Now())
	require.NotNil(t, ierr)
	require.Equal(t, int64(1), c.cacheHit.count.Load())
}
