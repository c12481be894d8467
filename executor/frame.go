package executor

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"

	pb "github.com/gpulet/gpuletd/executor/executorpb"
	"google.golang.org/protobuf/proto"
)

// Inference travels between daemon and executor as frames on a plain
// connection to the executor's socket, not as a gRPC stream: a request is
// one write on each side, its tensor bytes are never marshalled, and no
// writer or reader goroutine of HTTP/2 stands between caller and socket.
// That saves the daemon CPU; the round trip's latency did not move beyond
// the noise (`gpuletd bench hop`: 112–165 µs p50 over the gRPC stream,
// 123–153 µs framed, on a 2-core VM; waking the processes is most of it).
//
// The connection opens with framePreface from the daemon. Every frame then
// is an 8-byte prefix (the header's length and the payload's, little-endian
// uint32), the header (an InferRequest or InferResponse whose tensors carry
// raw_size instead of data) and the payload (the tensors' bytes in order).

// framePreface opens a framed connection; a gRPC client's first bytes are
// HTTP/2's "PRI * HT", so the executor tells the two apart by them.
var framePreface = []byte("GPLTINF1")

const (
	// maxFrameHeader bounds a frame's message without its tensor bytes.
	maxFrameHeader = 16 << 20
	// frameReadBuffer is the reader's buffer: frames that arrive together
	// are read with one system call.
	frameReadBuffer = 64 << 10
)

// errBadFrame is a frame that breaks the framing; the connection is closed.
var errBadFrame = errors.New("bad frame")

// frameTensors returns the tensors whose bytes a message's frame carries.
func frameTensors(m proto.Message) []*pb.Tensor {
	switch m := m.(type) {
	case *pb.InferRequest:
		return m.Inputs
	case *pb.InferResponse:
		return m.Outputs
	}
	return nil
}

// writeFrame writes m as one frame with one vectored write, the tensors'
// bytes from where they are. m is left as it was, but must not be read by
// anyone else while it is written.
func writeFrame(w io.Writer, m proto.Message) error {
	bufs, err := appendFrame(nil, m)
	if err != nil {
		return err
	}
	if _, err := bufs.WriteTo(w); err != nil {
		return fmt.Errorf("write frame: %w", err)
	}
	return nil
}

// appendFrame appends m's frame to bufs: its head, then its tensors' bytes
// where they are.
func appendFrame(bufs net.Buffers, m proto.Message) (net.Buffers, error) {
	ts := frameTensors(m)
	data := make([][]byte, len(ts))
	at := len(bufs)
	bufs = append(bufs, nil)
	var payload int64
	for i, t := range ts {
		data[i] = t.Data
		t.RawSize, t.Data = int64(len(t.Data)), nil
		payload += t.RawSize
		if len(data[i]) > 0 {
			bufs = append(bufs, data[i])
		}
	}
	head, err := frameHead(m, payload)
	for i, t := range ts {
		t.RawSize, t.Data = 0, data[i]
	}
	if err != nil {
		return bufs[:at], err
	}
	bufs[at] = head
	return bufs, nil
}

// frameHead is a frame's prefix and header.
func frameHead(m proto.Message, payload int64) ([]byte, error) {
	if payload > maxMessage {
		return nil, fmt.Errorf("write frame: %d tensor bytes exceed %d", payload, maxMessage)
	}
	head := make([]byte, 8, 8+proto.Size(m))
	head, err := proto.MarshalOptions{}.MarshalAppend(head, m)
	if err != nil {
		return nil, fmt.Errorf("write frame: %w", err)
	}
	binary.LittleEndian.PutUint32(head[0:4], uint32(len(head)-8))
	binary.LittleEndian.PutUint32(head[4:8], uint32(payload))
	return head, nil
}

// readFrame reads one frame into m; m's tensors' data then point into one
// buffer of the payload, which the caller owns.
func readFrame(r *bufio.Reader, m proto.Message) error {
	var prefix [8]byte
	if _, err := io.ReadFull(r, prefix[:]); err != nil {
		return err
	}
	hlen, plen := binary.LittleEndian.Uint32(prefix[0:4]), binary.LittleEndian.Uint32(prefix[4:8])
	if hlen > maxFrameHeader || plen > maxMessage {
		return fmt.Errorf("%w: header of %d bytes, payload of %d", errBadFrame, hlen, plen)
	}
	buf := make([]byte, int(hlen)+int(plen))
	if _, err := io.ReadFull(r, buf); err != nil {
		return fmt.Errorf("read frame: %w", err)
	}
	if err := proto.Unmarshal(buf[:hlen], m); err != nil {
		return fmt.Errorf("%w: %w", errBadFrame, err)
	}
	payload := buf[hlen:]
	for _, t := range frameTensors(m) {
		if t == nil {
			continue
		}
		if t.RawSize < 0 || t.RawSize > int64(len(payload)) {
			return fmt.Errorf("%w: tensor %q claims %d bytes, %d are left", errBadFrame, t.Name, t.RawSize, len(payload))
		}
		t.Data, payload = payload[:t.RawSize:t.RawSize], payload[t.RawSize:]
		t.RawSize = 0
	}
	if len(payload) != 0 {
		return fmt.Errorf("%w: %d payload bytes belong to no tensor", errBadFrame, len(payload))
	}
	return nil
}
