// Package onnxfile reads what gpuletd needs from an ONNX model file without
// ONNX Runtime: the tensors it keeps in other files (external data) and the
// inputs and outputs its graph declares. It streams the file and skips (in a
// file, seeks past) the tensors' data, so a model of any size is read in
// constant memory, in the time of one read or less. It does I/O only on the
// reader or path it is given.
package onnxfile

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"

	"google.golang.org/protobuf/encoding/protowire"
)

// ExternalRef is one tensor of an ONNX model that keeps its data in a file
// beside the model file (ONNX's external data, which exporters write for
// models past protobuf's 2 GB and often below it).
type ExternalRef struct {
	Tensor   string // the tensor's name
	Location string // the file, relative to the model file's folder
	End      int64  // the byte past the tensor's data: offset + length; 0 when unknown
}

// valueInfo is one input or output of the main graph as the file declares it.
type valueInfo struct {
	name string
	// other names the value's type when it is not a tensor ("a sequence").
	other string
	elem  int64   // TensorProto.DataType of a tensor's elements
	dims  []int64 // -1 where a dimension is symbolic or unknown; nil: no shape
}

// Facts is what one pass over a model file finds.
type Facts struct {
	// ExternalData are the tensors kept in other files, in file order.
	ExternalData    []ExternalRef
	inputs, outputs []valueInfo
	// initializers are the main graph's initializers: graph inputs of those
	// names are optional (an export may list every weight as an input).
	initializers map[string]bool
}

// ErrNotONNX says the model file did not parse as an ONNX ModelProto.
var ErrNotONNX = errors.New("not an ONNX model")

// pbKind is a message type of ONNX's schema the scan reads into.
type pbKind int

const (
	kindModel pbKind = iota
	kindMainGraph
	kindGraph // a subgraph: an If, Loop or Scan body
	kindNode
	kindAttribute
	kindTensor
	kindInitializer // a tensor the main graph initializes
	kindSparseTensor
	kindSparseInitializer
	kindFunction
	kindEntry
	kindInput
	kindOutput
	kindType
	kindTensorType
	kindShape
	kindDim
)

// pbChildren maps each message type to its fields that hold a message the
// scan reads, by field number (onnx.proto: ModelProto.graph 7, functions
// 25; GraphProto.node 1, initializer 5, input 11, output 12,
// sparse_initializer 15; NodeProto.attribute 5; AttributeProto.t 5, g 6,
// tensors 10, graphs 11, sparse_tensor 22, sparse_tensors 23;
// SparseTensorProto.values 1, indices 2; FunctionProto.node 7;
// TensorProto.external_data 13; ValueInfoProto.type 2;
// TypeProto.tensor_type 1; TypeProto.Tensor.shape 2; TensorShapeProto.dim
// 1).
var pbChildren = map[pbKind]map[protowire.Number]pbKind{
	kindModel:             {7: kindMainGraph, 25: kindFunction},
	kindMainGraph:         {1: kindNode, 5: kindInitializer, 11: kindInput, 12: kindOutput, 15: kindSparseInitializer},
	kindGraph:             {1: kindNode, 5: kindTensor, 15: kindSparseTensor},
	kindNode:              {5: kindAttribute},
	kindAttribute:         {5: kindTensor, 6: kindGraph, 10: kindTensor, 11: kindGraph, 22: kindSparseTensor, 23: kindSparseTensor},
	kindSparseTensor:      {1: kindTensor, 2: kindTensor},
	kindSparseInitializer: {1: kindInitializer, 2: kindTensor},
	kindFunction:          {7: kindNode},
	kindTensor:            {13: kindEntry},
	kindInitializer:       {13: kindEntry},
	kindInput:             {2: kindType},
	kindOutput:            {2: kindType},
	kindType:              {1: kindTensorType},
	kindTensorType:        {2: kindShape},
	kindShape:             {1: kindDim},
}

// otherTypes names TypeProto's values that are not tensors, by field.
var otherTypes = map[protowire.Number]string{
	4: "a sequence", 5: "a map", 7: "an opaque value", 8: "a sparse tensor", 9: "an optional value",
}

// The scalar fields read: TensorProto.name 8 and data_location 14
// (EXTERNAL is 1); StringStringEntryProto.key 1 and value 2;
// ValueInfoProto.name 1; TypeProto.Tensor.elem_type 1;
// TensorShapeProto.Dimension.dim_value 1.
const (
	tensorName         protowire.Number = 8
	tensorDataLocation protowire.Number = 14
	locationExternal                    = 1
	entryKey           protowire.Number = 1
	entryValue         protowire.Number = 2
	valueName          protowire.Number = 1
	tensorElemType     protowire.Number = 1
	dimValue           protowire.Number = 1
)

// Bounds on what a well-formed model file holds, so that a malformed one
// cannot make the reader recurse or allocate without end.
const (
	maxPBDepth  = 100     // nested graphs (If, Loop and Scan bodies)
	maxPBString = 1 << 16 // a name, an external_data key or value
	maxPBDims   = 64      // dimensions of one input or output (ONNX Runtime's limit is lower)
)

// Scan reads an ONNX model from r, to its end. It streams: tensors' own
// data is skipped, never held; given an io.Seeker it seeks past large
// fields instead of reading them. A file that is not a ModelProto returns
// an error wrapping ErrNotONNX.
func Scan(r io.Reader) (*Facts, error) {
	s := &onnxScan{pbReader: pbReader{r: bufio.NewReaderSize(r, pbBuffer), src: r}, facts: Facts{initializers: map[string]bool{}}}
	if f, ok := r.(io.Seeker); ok {
		s.seeker = f
	}
	if err := s.message(kindModel, -1, 0); err != nil {
		return nil, fmt.Errorf("%w: at byte %d: %w", ErrNotONNX, s.off, err)
	}
	return &s.facts, nil
}

// onnxScan is one pass over a model file: what it found, and the tensor and
// value being read (neither nests in another of its kind).
type onnxScan struct {
	pbReader
	facts  Facts
	tensor *tensorFields
	value  *valueInfo
}

// tensorFields gathers what a TensorProto says about its data's place.
type tensorFields struct {
	name, location   string
	offset, length   int64
	external         bool
	entryKey, entryV string // the StringStringEntryProto being read
}

// message reads fields of a message of kind k until byte end (-1: the end of
// the stream), at nesting depth.
func (s *onnxScan) message(k pbKind, end int64, depth int) error {
	if depth > maxPBDepth {
		return fmt.Errorf("messages nested deeper than %d", maxPBDepth)
	}
	s.open(k)
	for end < 0 || s.off < end {
		tag, err := s.varint()
		if errors.Is(err, io.EOF) && end < 0 {
			break
		}
		if err != nil {
			return err
		}
		num, typ := protowire.DecodeTag(tag)
		if num <= 0 {
			return fmt.Errorf("field number %d", num)
		}
		switch typ {
		case protowire.VarintType:
			var v uint64
			if v, err = s.varint(); err != nil {
				return unexpected(err)
			}
			s.scalar(k, num, v)
		case protowire.Fixed32Type:
			err = s.skip(4)
		case protowire.Fixed64Type:
			err = s.skip(8)
		case protowire.BytesType:
			err = s.field(k, num, end, depth)
		default:
			return fmt.Errorf("wire type %d of field %d", typ, num)
		}
		if err != nil {
			return err
		}
	}
	if end >= 0 && s.off != end {
		return fmt.Errorf("a field runs past its message's end")
	}
	return s.close(k)
}

// open starts a message of kind k.
func (s *onnxScan) open(k pbKind) {
	switch k {
	case kindTensor, kindInitializer:
		s.tensor = &tensorFields{}
	case kindEntry:
		s.tensor.entryKey, s.tensor.entryV = "", ""
	case kindInput, kindOutput:
		s.value = &valueInfo{}
	case kindShape:
		s.value.dims = []int64{}
	case kindDim:
		s.value.dims = append(s.value.dims, -1)
	}
}

// close ends a message of kind k, keeping what it said.
func (s *onnxScan) close(k pbKind) error {
	f := &s.facts
	switch k {
	case kindEntry:
		s.tensor.note(s.tensor.entryKey, s.tensor.entryV)
	case kindTensor, kindInitializer:
		t := s.tensor
		if t.external {
			f.ExternalData = append(f.ExternalData, ExternalRef{Tensor: t.name, Location: t.location, End: t.offset + t.length})
		}
		if k == kindInitializer {
			f.initializers[t.name] = true
		}
	case kindInput:
		f.inputs = append(f.inputs, *s.value)
	case kindOutput:
		f.outputs = append(f.outputs, *s.value)
	case kindDim:
		if len(s.value.dims) > maxPBDims {
			return fmt.Errorf("value %q has more than %d dimensions", s.value.name, maxPBDims)
		}
	}
	return nil
}

// scalar takes a varint field v of a message of kind k.
func (s *onnxScan) scalar(k pbKind, num protowire.Number, v uint64) {
	switch {
	case (k == kindTensor || k == kindInitializer) && num == tensorDataLocation:
		s.tensor.external = v == locationExternal
	case k == kindTensorType && num == tensorElemType:
		s.value.elem = int64(v)
	case k == kindDim && num == dimValue:
		s.value.dims[len(s.value.dims)-1] = int64(v)
	}
}

// field reads one length-delimited field of a message of kind k: a message
// the scan reads into is read, a string it needs is kept, and anything else
// (the tensors' own data) is skipped.
func (s *onnxScan) field(k pbKind, num protowire.Number, end int64, depth int) error {
	n, err := s.varint()
	if err != nil {
		return unexpected(err)
	}
	if n > uint64(1)<<62 || (end >= 0 && s.off+int64(n) > end) {
		return fmt.Errorf("field %d of %d bytes runs past its message's end", num, n)
	}
	l := int64(n)
	if child, ok := pbChildren[k][num]; ok {
		return s.message(child, s.off+l, depth+1)
	}
	var dst *string
	switch {
	case (k == kindTensor || k == kindInitializer) && num == tensorName:
		dst = &s.tensor.name
	case k == kindEntry && num == entryKey:
		dst = &s.tensor.entryKey
	case k == kindEntry && num == entryValue:
		dst = &s.tensor.entryV
	case (k == kindInput || k == kindOutput) && num == valueName:
		dst = &s.value.name
	case k == kindType && otherTypes[num] != "":
		s.value.other = otherTypes[num]
		return s.skip(l)
	default:
		return s.skip(l)
	}
	if l > maxPBString {
		return fmt.Errorf("a string of %d bytes in field %d", l, num)
	}
	b := make([]byte, l)
	if _, err := io.ReadFull(s.r, b); err != nil {
		return unexpected(err)
	}
	s.off += l
	*dst = string(b)
	return nil
}

// note takes one external_data entry of a tensor (ONNX's keys: location,
// offset, length; checksum and others are not needed here).
func (t *tensorFields) note(key, value string) {
	switch key {
	case "location":
		t.location = value
	case "offset":
		t.offset, _ = strconv.ParseInt(value, 10, 64)
	case "length":
		t.length, _ = strconv.ParseInt(value, 10, 64)
	}
}

// pbBuffer is the read buffer; a field past it is sought over in a file.
const pbBuffer = 64 << 10

// pbReader reads protobuf's wire format from a stream, counting bytes.
type pbReader struct {
	r      *bufio.Reader
	src    io.Reader // what r reads
	seeker io.Seeker // src, when it can seek
	off    int64
}

// varint reads one base-128 varint.
func (p *pbReader) varint() (uint64, error) {
	var v uint64
	for i := 0; i < 10; i++ {
		b, err := p.r.ReadByte()
		if err != nil {
			if i > 0 {
				return 0, unexpected(err)
			}
			return 0, err
		}
		p.off++
		v |= uint64(b&0x7f) << (7 * i)
		if b < 0x80 {
			return v, nil
		}
	}
	return 0, errors.New("a varint longer than 10 bytes")
}

// skip discards n bytes: reads them, or in a file seeks past them.
func (p *pbReader) skip(n int64) error {
	if p.seeker != nil && n > pbBuffer {
		buffered := int64(p.r.Buffered())
		if _, err := p.r.Discard(int(buffered)); err != nil {
			return err
		}
		at, err := p.seeker.Seek(n-buffered, io.SeekCurrent)
		if err != nil {
			return err
		}
		p.r.Reset(p.src)
		p.off += n
		if end, err := p.seeker.Seek(0, io.SeekEnd); err != nil || end < at {
			return io.ErrUnexpectedEOF // sought past the end: the field is cut short
		}
		_, err = p.seeker.Seek(at, io.SeekStart)
		return err
	}
	m, err := io.CopyN(io.Discard, p.r, n)
	p.off += m
	return unexpected(err)
}

// unexpected turns io.EOF inside a field into io.ErrUnexpectedEOF.
func unexpected(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}
