package onnxrt

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"unsafe"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/gpulet/gpuletd/executor/tensor"
	"github.com/gpulet/gpuletd/internal/onnxfile"
)

// ErrTerminated is returned by Session.Run when its context ended the run.
var ErrTerminated = errors.New("run terminated")

// ErrInvalidArgument marks a run that ONNX Runtime failed for its inputs'
// values or shapes (ORT_INVALID_ARGUMENT), as a token id past an embedding
// table's rows: the request's data, not the model or the engine.
var ErrInvalidArgument = errors.New("onnx runtime refused the inputs")

// maxRank bounds the rank of an output the runtime allocates.
const maxRank = 64

// Session is one ONNX Runtime inference session over a model file. Unlike
// onnxruntime_go's sessions it takes and returns tensors of any rank,
// scalars included, and of every element type gpuletd serves (BF16 and
// strings among them). Run is safe for concurrent use; the caller must not
// Close a session under a run.
type Session struct {
	ptr   unsafe.Pointer
	names unsafe.Pointer // C strings: the inputs', then the outputs'
	nIn   int
	outs  []string

	closeOnce sync.Once
}

// NewSession opens the model at path with the session options so, which
// stay the caller's. inputs and outputs name the tensors Run takes and
// gives, in that order. It needs Init.
func NewSession(path string, inputs, outputs []string, so *ort.SessionOptions) (*Session, error) {
	if err := initialized("open session " + path); err != nil {
		return nil, err
	}
	if len(inputs) == 0 || len(outputs) == 0 {
		return nil, fmt.Errorf("open session %s: %w: a session needs inputs and outputs", path, ErrInvalidModel)
	}
	ptr, err := sessionOpen(path, sessionOptionsPointer(so))
	if err != nil {
		return nil, fmt.Errorf("open session %s: %s", path, oneLine(err))
	}
	return &Session{
		ptr:   ptr,
		names: cStrings(append(append([]string(nil), inputs...), outputs...)),
		nIn:   len(inputs),
		outs:  append([]string(nil), outputs...),
	}, nil
}

// Close releases the session. Later calls do nothing.
func (s *Session) Close() {
	s.closeOnce.Do(func() {
		sessionRelease(s.ptr)
		freeCStrings(s.names, s.nIn+len(s.outs))
		s.ptr, s.names = nil, nil
	})
}

// Run runs the session once. ins are the inputs in the session's order.
// outs has one slot per output: a slot whose Data is non-nil is written in
// place (its shape and type must be what the model gives), an empty slot is
// filled with a tensor the runtime allocated, copied into Go memory. A
// context that ends during the run stops it between graph nodes, and Run
// returns an error wrapping ErrTerminated and the context's cause.
func (s *Session) Run(ctx context.Context, ins []tensor.Tensor, outs []tensor.Tensor) error {
	if len(ins) != s.nIn || len(outs) != len(s.outs) {
		return fmt.Errorf("run session: %d inputs and %d outputs given, the session has %d and %d",
			len(ins), len(outs), s.nIn, len(s.outs))
	}
	var pin runtime.Pinner
	defer pin.Unpin()
	inVals, outVals := cPointers(len(ins)), cPointers(len(outs))
	defer freeC(inVals)
	defer freeC(outVals)
	defer releaseAll(inVals)
	defer releaseAll(outVals)
	for i, t := range ins {
		v, err := newValue(&pin, t)
		if err != nil {
			return fmt.Errorf("run session: input %w", err)
		}
		inVals[i] = v
	}
	for i, t := range outs {
		if t.Data == nil {
			continue
		}
		v, err := newValue(&pin, t)
		if err != nil {
			return fmt.Errorf("run session: output %w", err)
		}
		outVals[i] = v
	}

	ro, err := runOptionsNew()
	if err != nil {
		return fmt.Errorf("run session: %s", oneLine(err))
	}
	defer runOptionsRelease(ro)
	terminated := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		_ = runTerminate(ro)
		close(terminated)
	})
	err = run(s.ptr, ro, s.names, inVals, outVals)
	if !stop() {
		<-terminated // the flag is set: wait before the options go
	}
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("run session: %w: %w", ErrTerminated, context.Cause(ctx))
		}
		wrapped := fmt.Errorf("run session: %s", oneLine(err))
		if errors.Is(err, ErrInvalidArgument) {
			return &invalidArgument{wrapped} // the code survives the message's rewording
		}
		return wrapped
	}
	for i := range outs {
		if outs[i].Data != nil {
			continue
		}
		t, err := readValue(s.outs[i], outVals[i])
		if err != nil {
			return fmt.Errorf("run session: output %q: %w", s.outs[i], err)
		}
		outs[i] = t
	}
	return nil
}

func releaseAll(vs []unsafe.Pointer) {
	for _, v := range vs {
		if v != nil {
			valueRelease(v)
		}
	}
}

// newValue makes a runtime value of t. Fixed-size tensors are wrapped in
// place, their bytes pinned by pin (copied first when not aligned to the
// element size); BYTES tensors become string tensors, copied (see
// Strings).
func newValue(pin *runtime.Pinner, t tensor.Tensor) (unsafe.Pointer, error) {
	et, ok := elementType(t.DataType)
	if !ok {
		return nil, fmt.Errorf("%q: %w: %s", t.Name, tensor.ErrUnsupported, t.DataType)
	}
	if err := t.Check(); err != nil {
		return nil, fmt.Errorf("%q: %w", t.Name, err)
	}
	if t.DataType == tensor.Bytes {
		elems, err := Strings(t.Data)
		if err != nil {
			return nil, fmt.Errorf("%q: %w", t.Name, err)
		}
		v, err := stringTensor(t.Shape, elems)
		if err != nil {
			return nil, fmt.Errorf("%q: %s", t.Name, oneLine(err))
		}
		return v, nil
	}
	data := t.Data
	if len(data) == 0 {
		return nil, fmt.Errorf("%q: %w: shape %v has no elements", t.Name, tensor.ErrInvalid, t.Shape)
	}
	if uintptr(unsafe.Pointer(&data[0]))%uintptr(t.DataType.Size()) != 0 {
		data = append(make([]byte, 0, len(data)+8), data...)
	}
	pin.Pin(&data[0])
	v, err := tensorOver(unsafe.Pointer(&data[0]), len(data), t.Shape, int(et))
	if err != nil {
		return nil, fmt.Errorf("%q: %s", t.Name, oneLine(err))
	}
	return v, nil
}

// Strings splits a BYTES tensor's data into the elements of an ONNX string
// tensor. ONNX Runtime takes strings NUL-terminated, so an element holding
// a zero byte is an error wrapping tensor.ErrUnsupported rather than a
// string cut short.
func Strings(data []byte) ([][]byte, error) {
	elems, err := tensor.BytesElements(data)
	if err != nil {
		return nil, err
	}
	for i, e := range elems {
		if bytes.IndexByte(e, 0) >= 0 {
			return nil, fmt.Errorf("%w: BYTES element %d holds a zero byte, which ONNX Runtime's strings cannot carry", tensor.ErrUnsupported, i)
		}
	}
	return elems, nil
}

// DataTypeOf returns gpuletd's data type for an ONNX element type; ONNX
// types without a protocol name (complex, 8- and 4-bit floats, int4) are
// not served (onnxfile's table, which reads the same numbers from files).
func DataTypeOf(et ort.TensorElementDataType) (tensor.DataType, bool) {
	return onnxfile.DataTypeOf(int64(et))
}

// elementType is the ONNX element type of the protocol's data type dt.
func elementType(dt tensor.DataType) (ort.TensorElementDataType, bool) {
	e, ok := onnxfile.ElemTypeOf(dt)
	return ort.TensorElementDataType(e), ok
}

// readValue copies a tensor value the runtime allocated into Go memory.
func readValue(name string, v unsafe.Pointer) (tensor.Tensor, error) {
	if v == nil {
		return tensor.Tensor{}, errors.New("the runtime gave no value")
	}
	et, shape, count, err := valueDescribe(v)
	if err != nil {
		return tensor.Tensor{}, errors.New(oneLine(err))
	}
	dt, ok := DataTypeOf(ort.TensorElementDataType(et))
	if !ok {
		return tensor.Tensor{}, fmt.Errorf("%w: ONNX element type %s", tensor.ErrUnsupported, ort.TensorElementDataType(et))
	}
	t := tensor.Tensor{Name: name, DataType: dt, Shape: shape, Data: []byte{}}
	switch {
	case dt == tensor.Bytes:
		elems, err := valueStrings(v, count)
		if err != nil {
			return tensor.Tensor{}, errors.New(oneLine(err))
		}
		for _, e := range elems {
			t.Data = tensor.AppendBytesElement(t.Data, e)
		}
	case count > 0:
		if t.Data, err = valueBytes(v, count*dt.Size()); err != nil {
			return tensor.Tensor{}, errors.New(oneLine(err))
		}
	}
	return t, t.Check()
}
