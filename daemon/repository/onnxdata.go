package repository

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"

	"google.golang.org/protobuf/encoding/protowire"
)

// externalRef is one tensor of an ONNX model that keeps its data in a file
// beside the model file (ONNX's external data, which exporters write for
// models past protobuf's 2 GB and often below it).
type externalRef struct {
	tensor   string // the tensor's name
	location string // the file, relative to the model file's folder
	end      int64  // the byte past the tensor's data: offset + length; 0 when unknown
}

// errNotONNX says the model file did not parse as an ONNX ModelProto.
var errNotONNX = errors.New("not an ONNX model")

// pbKind is a message type of ONNX's schema that can lead to a tensor.
type pbKind int

const (
	kindModel pbKind = iota
	kindGraph
	kindNode
	kindAttribute
	kindTensor
	kindSparseTensor
	kindFunction
	kindEntry
)

// pbChildren maps each message type to its fields that hold a message
// leading to a tensor, by field number (onnx.proto: ModelProto.graph 7,
// functions 25; GraphProto.node 1, initializer 5, sparse_initializer 15;
// NodeProto.attribute 5; AttributeProto.t 5, g 6, tensors 10, graphs 11,
// sparse_tensor 22, sparse_tensors 23; SparseTensorProto.values 1,
// indices 2; FunctionProto.node 7; TensorProto.external_data 13).
var pbChildren = map[pbKind]map[protowire.Number]pbKind{
	kindModel:        {7: kindGraph, 25: kindFunction},
	kindGraph:        {1: kindNode, 5: kindTensor, 15: kindSparseTensor},
	kindNode:         {5: kindAttribute},
	kindAttribute:    {5: kindTensor, 6: kindGraph, 10: kindTensor, 11: kindGraph, 22: kindSparseTensor, 23: kindSparseTensor},
	kindSparseTensor: {1: kindTensor, 2: kindTensor},
	kindFunction:     {7: kindNode},
	kindTensor:       {13: kindEntry},
}

// TensorProto's fields read here: name 8, data_location 14 (EXTERNAL is 1);
// StringStringEntryProto's key 1 and value 2.
const (
	tensorName         protowire.Number = 8
	tensorDataLocation protowire.Number = 14
	locationExternal                    = 1
	entryKey           protowire.Number = 1
	entryValue         protowire.Number = 2
)

// Bounds on what a well-formed model file holds, so that a malformed one
// cannot make the reader recurse or allocate without end.
const (
	maxPBDepth  = 100     // nested graphs (If, Loop and Scan bodies)
	maxPBString = 1 << 16 // a tensor's name, an external_data key or value
)

// readExternalRefs reads an ONNX model from r, to its end, and returns the
// tensors that keep their data outside it, in the order the file has them.
// It streams: the tensors' own data is skipped, never held, so a model of
// any size is read in constant memory. A file that is not a ModelProto
// returns an error wrapping errNotONNX.
func readExternalRefs(r io.Reader) ([]externalRef, error) {
	p := &pbReader{r: bufio.NewReaderSize(r, 64<<10)}
	var refs []externalRef
	if err := p.message(kindModel, -1, 0, &refs, nil); err != nil {
		return nil, fmt.Errorf("%w: at byte %d: %w", errNotONNX, p.off, err)
	}
	return refs, nil
}

// pbReader reads protobuf's wire format from a stream, counting bytes.
type pbReader struct {
	r   *bufio.Reader
	off int64
}

// tensorFields gathers what a TensorProto says about its data's place.
type tensorFields struct {
	name, location   string
	offset, length   int64
	external         bool
	entryKey, entryV string // the StringStringEntryProto being read
}

// message reads fields of a message of kind k until byte end (-1: the end of
// the stream), at nesting depth, appending tensors kept outside to refs; t
// collects the fields of the TensorProto or entry being read.
func (p *pbReader) message(k pbKind, end int64, depth int, refs *[]externalRef, t *tensorFields) error {
	if depth > maxPBDepth {
		return fmt.Errorf("messages nested deeper than %d", maxPBDepth)
	}
	if k == kindTensor {
		t = &tensorFields{}
	}
	for end < 0 || p.off < end {
		tag, err := p.varint()
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
			v, err := p.varint()
			if err != nil {
				return unexpected(err)
			}
			if k == kindTensor && num == tensorDataLocation {
				t.external = v == locationExternal
			}
		case protowire.Fixed32Type:
			err = p.skip(4)
		case protowire.Fixed64Type:
			err = p.skip(8)
		case protowire.BytesType:
			err = p.field(k, num, end, depth, refs, t)
		default:
			return fmt.Errorf("wire type %d of field %d", typ, num)
		}
		if err != nil {
			return err
		}
	}
	if end >= 0 && p.off != end {
		return fmt.Errorf("a field runs past its message's end")
	}
	switch {
	case k == kindEntry:
		t.note(t.entryKey, t.entryV)
	case k == kindTensor && t.external:
		*refs = append(*refs, externalRef{tensor: t.name, location: t.location, end: t.offset + t.length})
	}
	return nil
}

// field reads one length-delimited field of a message of kind k: a message
// that may lead to a tensor is read, a string this reader needs is kept,
// and anything else (the tensors' own data) is skipped.
func (p *pbReader) field(k pbKind, num protowire.Number, end int64, depth int, refs *[]externalRef, t *tensorFields) error {
	n, err := p.varint()
	if err != nil {
		return unexpected(err)
	}
	if n > uint64(1)<<62 || (end >= 0 && p.off+int64(n) > end) {
		return fmt.Errorf("field %d of %d bytes runs past its message's end", num, n)
	}
	l := int64(n)
	if child, ok := pbChildren[k][num]; ok {
		if child == kindEntry {
			t.entryKey, t.entryV = "", ""
		}
		return p.message(child, p.off+l, depth+1, refs, t)
	}
	var dst *string
	switch {
	case k == kindTensor && num == tensorName:
		dst = &t.name
	case k == kindEntry && num == entryKey:
		dst = &t.entryKey
	case k == kindEntry && num == entryValue:
		dst = &t.entryV
	default:
		return p.skip(l)
	}
	if l > maxPBString {
		return fmt.Errorf("a string of %d bytes in field %d", l, num)
	}
	b := make([]byte, l)
	if _, err := io.ReadFull(p.r, b); err != nil {
		return unexpected(err)
	}
	p.off += l
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

// skip discards n bytes.
func (p *pbReader) skip(n int64) error {
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
