package kserve

import (
	"compress/flate"
	"compress/zlib"
	"fmt"
	"io"
	"sync"

	"google.golang.org/grpc/encoding"
	// gzip is one of the two message codings Triton's gRPC endpoint reads
	// (tritonclient's compression_algorithm="gzip"); importing it registers
	// it with every gRPC server and client of the process.
	_ "google.golang.org/grpc/encoding/gzip"
)

// GRPCDeflate is the name of gRPC's deflate message coding: the zlib format
// (RFC 1950), as gRPC's C core writes it and tritonclient's
// compression_algorithm="deflate" asks for.
const GRPCDeflate = "deflate"

func init() {
	// grpc-go brings gzip alone; registering is only allowed while the
	// program initializes.
	encoding.RegisterCompressor(&deflateCompressor{})
}

// deflateCompressor is gRPC's deflate coding.
type deflateCompressor struct {
	writers sync.Pool
}

// Name is the coding's name in grpc-encoding.
func (*deflateCompressor) Name() string { return GRPCDeflate }

// Compress gives a writer that compresses into w at the fastest level.
func (c *deflateCompressor) Compress(w io.Writer) (io.WriteCloser, error) {
	if zw, ok := c.writers.Get().(*zlib.Writer); ok {
		zw.Reset(w)
		return &pooledZlibWriter{Writer: zw, pool: &c.writers}, nil
	}
	zw, err := zlib.NewWriterLevel(w, flate.BestSpeed)
	if err != nil {
		return nil, fmt.Errorf("start deflate: %w", err)
	}
	return &pooledZlibWriter{Writer: zw, pool: &c.writers}, nil
}

// Decompress gives a reader of r's decompressed bytes; gRPC bounds how many
// it reads (the largest message the server or client takes).
func (*deflateCompressor) Decompress(r io.Reader) (io.Reader, error) {
	zr, err := zlib.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("read deflate header: %w", err)
	}
	return zr, nil
}

// pooledZlibWriter returns its compressor to the pool once closed.
type pooledZlibWriter struct {
	*zlib.Writer
	pool *sync.Pool
}

// Close ends the compressed stream and gives the compressor back.
func (w *pooledZlibWriter) Close() error {
	err := w.Writer.Close()
	w.pool.Put(w.Writer)
	return err
}
