package engine

import (
	"slices"
	"sync"

	"github.com/gpulet/gpuletd/executor/tensor"
)

// joinBuffers recycles the buffers that joined inputs are copied into. A
// joined input lives only for one run, and allocating a fresh buffer per
// batch cost about 10 µs for 25 KB (BenchmarkDispatchOverhead), a large
// share of the engine's overhead on small models.
var joinBuffers sync.Pool

// join concatenates the parts of one input along dimension 0 into a pooled
// buffer, like tensor.Concat. The parts were validated: same data type and
// non-batch dims. The caller hands the buffer back with release once the
// run is over.
func join(name string, parts []tensor.Tensor) (t tensor.Tensor, release func()) {
	total := 0
	var rows int64
	for _, p := range parts {
		total += len(p.Data)
		rows += p.Shape[0]
	}
	var buf []byte
	if pb, ok := joinBuffers.Get().(*[]byte); ok && cap(*pb) >= total {
		buf = (*pb)[:0]
	} else {
		buf = make([]byte, 0, total)
	}
	for _, p := range parts {
		buf = append(buf, p.Data...)
	}
	shape := slices.Clone(parts[0].Shape)
	shape[0] = rows
	return tensor.Tensor{Name: name, DataType: parts[0].DataType, Shape: shape, Data: buf},
		func() { joinBuffers.Put(&buf) }
}
