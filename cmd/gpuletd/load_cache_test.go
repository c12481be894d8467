package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/sim/loadgen"
)

func TestCacheHitsDuringARun(t *testing.T) {
	hits := cacheHitsDuring(map[string]int64{"a": 5, "b": 7, "c": 0}, map[string]int64{"a": 105, "b": 7, "d": 3})
	require.Equal(t, map[string]int64{"a": 100}, hits, "b did not hit, c was not read after, d not before")
	var b strings.Builder
	writeCacheHits(&b, hits, []*loadgen.Report{{Model: "a", OK: 120}, {Model: "b", OK: 50}}, 1)
	require.Equal(t, "a: the daemon's response cache answered 100 of its requests during the run (120 answered here; "+
		"the same request went every time; --inputs N sends N distinct ones)\n", b.String())
	b.Reset()
	writeCacheHits(&b, hits, []*loadgen.Report{{Model: "a", OK: 120}}, 50)
	require.Contains(t, b.String(), "(120 answered here; 50 distinct requests went in turn)\n")
}
