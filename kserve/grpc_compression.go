package kserve

import (
	"io"

	"google.golang.org/grpc/encoding"
)

func init() {
	// Triton's gRPC endpoint reads messages in gzip and deflate
	// (tritonclient's compression_algorithm); registering them, which gRPC
	// allows only while the program initializes, lets every gRPC server and
	// client of the process read and write them. grpc-go's own gzip is not
	// used: it decompresses byte by byte from the message's buffers, which
	// took a third of the daemon's CPU for lenet5's 3 KiB requests.
	encoding.RegisterCompressor(grpcCoding(CodingGzip))
	encoding.RegisterCompressor(grpcCoding(CodingDeflate))
}

// grpcCoding is a message coding of gRPC's, CodingGzip or CodingDeflate.
type grpcCoding string

// Name is the coding's name in grpc-encoding.
func (c grpcCoding) Name() string { return string(c) }

// Compress gives a writer that compresses into w.
func (c grpcCoding) Compress(w io.Writer) (io.WriteCloser, error) {
	return NewCompressor(string(c), w), nil
}

// Decompress gives a reader of r's bytes decompressed; gRPC bounds how many
// it reads (the largest message the server or client takes) and closes it,
// which gives its buffers back.
func (c grpcCoding) Decompress(r io.Reader) (io.Reader, error) {
	return NewDecompressor(string(c), r)
}
