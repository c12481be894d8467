package kserve

import (
	"bufio"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"sync"
)

// The codings inference bodies and gRPC messages may be compressed in, as
// Triton's endpoints take them. Deflate is the zlib format (RFC 1950) in
// both HTTP's Content-Encoding and gRPC's grpc-encoding.
const (
	CodingGzip    = "gzip"
	CodingDeflate = "deflate"
)

// ErrUnknownCoding is a coding other than CodingGzip and CodingDeflate.
var ErrUnknownCoding = errors.New("unknown coding")

// decompressor is one body's decompression; its buffers are pooled, since a
// deflate decompressor holds a 32 KiB window.
type decompressor struct {
	br *bufio.Reader
	gz *gzip.Reader
	zl io.ReadCloser
	r  io.Reader // gz or zl, while in use
}

var decompressors = sync.Pool{New: func() any { return &decompressor{br: bufio.NewReaderSize(nil, 4<<10)} }}

// NewDecompressor reads src's bytes decompressed from coding. A deflate
// source in gzip's format is read too, as Triton reads either under that
// name. src is read through a buffer, so the decompressor may read past
// what it gives. Close gives its buffers back for the next one (it does
// not close src); nothing may be read after it.
func NewDecompressor(coding string, src io.Reader) (io.ReadCloser, error) {
	if coding != CodingGzip && coding != CodingDeflate {
		return nil, fmt.Errorf("decompress %q: %w", coding, ErrUnknownCoding)
	}
	d := decompressors.Get().(*decompressor)
	d.br.Reset(src)
	zlibFormat := false
	if coding == CodingDeflate {
		magic, err := d.br.Peek(2)
		if err != nil {
			d.Close()
			return nil, noEOF(err)
		}
		zlibFormat = magic[0] != 0x1f || magic[1] != 0x8b
	}
	var err error
	switch {
	case zlibFormat && d.zl != nil:
		err = d.zl.(zlib.Resetter).Reset(d.br, nil)
		d.r = d.zl
	case zlibFormat:
		d.zl, err = zlib.NewReader(d.br)
		d.r = d.zl
	case d.gz != nil:
		err = d.gz.Reset(d.br)
		d.r = d.gz
	default:
		d.gz, err = gzip.NewReader(d.br)
		d.r = d.gz
	}
	if err != nil {
		if zlibFormat {
			d.zl = nil // a zlib reader whose header failed may not reset
		}
		d.Close()
		return nil, noEOF(err)
	}
	return d, nil
}

// Read gives decompressed bytes.
func (d *decompressor) Read(p []byte) (int, error) { return d.r.Read(p) }

// Close gives the buffers back.
func (d *decompressor) Close() error {
	d.br.Reset(nil)
	d.r = nil
	decompressors.Put(d)
	return nil
}

// noEOF makes a source that ends before its compressed header a cut one
// rather than an empty one.
func noEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// Compressors are pooled too: a deflate compressor holds about a megabyte
// of tables. They compress at the fastest level: inference answers are
// latency, not storage.
var (
	gzipWriters = sync.Pool{New: func() any {
		w, _ := gzip.NewWriterLevel(io.Discard, flate.BestSpeed)
		return w
	}}
	zlibWriters = sync.Pool{New: func() any {
		w, _ := zlib.NewWriterLevel(io.Discard, flate.BestSpeed)
		return w
	}}
)

// resettableWriter is a pooled compressor.
type resettableWriter interface {
	io.WriteCloser
	Reset(io.Writer)
}

// compressor writes into dst compressed; Close ends the stream and gives
// the compressor back.
type compressor struct {
	resettableWriter
	pool *sync.Pool
}

// NewCompressor writes compressed in coding (CodingGzip, or CodingDeflate
// for any other) into dst. Close ends the compressed stream (it does not
// close dst); nothing may be written after it.
func NewCompressor(coding string, dst io.Writer) io.WriteCloser {
	pool := &gzipWriters
	if coding == CodingDeflate {
		pool = &zlibWriters
	}
	w := pool.Get().(resettableWriter)
	w.Reset(dst)
	return &compressor{resettableWriter: w, pool: pool}
}

// Close ends the stream and gives the compressor back.
func (c *compressor) Close() error {
	err := c.resettableWriter.Close()
	c.resettableWriter.Reset(io.Discard)
	c.pool.Put(c.resettableWriter)
	return err
}

// Compress gives b compressed in coding (CodingGzip, or CodingDeflate for
// any other), in one buffer.
func Compress(coding string, b []byte) ([]byte, error) {
	var out bytes.Buffer
	out.Grow(len(b)/2 + 64)
	w := NewCompressor(coding, &out)
	if _, err := w.Write(b); err != nil {
		_ = w.Close()
		return nil, fmt.Errorf("compress %s: %w", coding, err)
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("compress %s: %w", coding, err)
	}
	return out.Bytes(), nil
}
