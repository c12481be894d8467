package kserve

import (
	"bytes"
	"compress/zlib"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/encoding"
)

func TestGRPCCompressorsAreRegistered(t *testing.T) {
	msg := []byte(strings.Repeat("raw_input_contents ", 200))
	for _, name := range []string{"gzip", CodingDeflate} {
		t.Run(name, func(t *testing.T) {
			c := encoding.GetCompressor(name)
			require.Equal(t, grpcCoding(name), c, "registered with gRPC")
			for range 2 { // the second round takes a pooled compressor
				var buf bytes.Buffer
				w, err := c.Compress(&buf)
				require.NoError(t, err)
				_, err = w.Write(msg)
				require.NoError(t, err)
				require.NoError(t, w.Close())
				require.Less(t, buf.Len(), len(msg))
				r, err := c.Decompress(bytes.NewReader(buf.Bytes()))
				require.NoError(t, err)
				got, err := io.ReadAll(r)
				require.NoError(t, err)
				require.Equal(t, msg, got)
				if name == CodingDeflate {
					// What gRPC's C core (and so tritonclient) reads: zlib.
					zr, err := zlib.NewReader(bytes.NewReader(buf.Bytes()))
					require.NoError(t, err)
					got, err = io.ReadAll(zr)
					require.NoError(t, err)
					require.Equal(t, msg, got)
				}
			}
		})
	}
	_, err := encoding.GetCompressor(CodingDeflate).Decompress(strings.NewReader("not zlib"))
	require.ErrorIs(t, err, zlib.ErrHeader)
}
