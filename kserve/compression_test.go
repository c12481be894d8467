package kserve

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCompressorsRoundTrip(t *testing.T) {
	msg := []byte(strings.Repeat(`{"data":[0.5,0.25]}`, 300))
	for _, coding := range []string{CodingGzip, CodingDeflate} {
		t.Run(coding, func(t *testing.T) {
			for range 3 { // later rounds take pooled compressors
				var buf bytes.Buffer
				w := NewCompressor(coding, &buf)
				_, err := w.Write(msg)
				require.NoError(t, err)
				require.NoError(t, w.Close())
				// What the standard readers of the format read.
				var std io.Reader
				if coding == CodingGzip {
					std, err = gzip.NewReader(bytes.NewReader(buf.Bytes()))
				} else {
					std, err = zlib.NewReader(bytes.NewReader(buf.Bytes()))
				}
				require.NoError(t, err)
				got, err := io.ReadAll(std)
				require.NoError(t, err)
				require.Equal(t, msg, got)

				r, err := NewDecompressor(coding, bytes.NewReader(buf.Bytes()))
				require.NoError(t, err)
				got, err = io.ReadAll(r)
				require.NoError(t, err)
				require.NoError(t, r.Close())
				require.Equal(t, msg, got)
			}
		})
	}
}

func TestNewDecompressor(t *testing.T) {
	msg := []byte(strings.Repeat("raw_input_contents", 100))
	var gz, zl, raw bytes.Buffer
	gw := gzip.NewWriter(&gz)
	_, _ = gw.Write(msg)
	_ = gw.Close()
	zw := zlib.NewWriter(&zl)
	_, _ = zw.Write(msg)
	_ = zw.Close()
	fw, _ := flate.NewWriter(&raw, flate.BestSpeed)
	_, _ = fw.Write(msg)
	_ = fw.Close()
	for _, tc := range []struct {
		name, coding string
		src          []byte
		err          error
		readErr      error
	}{
		{"gzip", CodingGzip, gz.Bytes(), nil, nil},
		{"deflate", CodingDeflate, zl.Bytes(), nil, nil},
		{"deflate sent in gzip's format", CodingDeflate, gz.Bytes(), nil, nil},
		{"raw deflate without zlib's header", CodingDeflate, raw.Bytes(), zlib.ErrHeader, nil},
		{"zlib sent as gzip", CodingGzip, zl.Bytes(), gzip.ErrHeader, nil},
		{"empty", CodingGzip, nil, io.ErrUnexpectedEOF, nil},
		{"empty deflate", CodingDeflate, nil, io.ErrUnexpectedEOF, nil},
		{"cut short", CodingGzip, gz.Bytes()[:gz.Len()/2], nil, io.ErrUnexpectedEOF},
		{"unknown coding", "br", gz.Bytes(), ErrUnknownCoding, nil},
		// After failures, the pooled readers still read.
		{"gzip again", CodingGzip, gz.Bytes(), nil, nil},
		{"deflate again", CodingDeflate, zl.Bytes(), nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := NewDecompressor(tc.coding, bytes.NewReader(tc.src))
			if tc.err != nil {
				require.ErrorIs(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			defer r.Close()
			got, err := io.ReadAll(r)
			if tc.readErr != nil {
				require.ErrorIs(t, err, tc.readErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, msg, got)
		})
	}
}
