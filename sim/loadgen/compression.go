package loadgen

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// The codings Config.Compression takes: HTTP's and gRPC's names alike
// (deflate being the zlib format in both).
const (
	CodingGzip    = "gzip"
	CodingDeflate = "deflate"
)

// compressed is p with its body compressed in coding, once before a run, so
// that every request carries the same compressed bytes.
func (p *Payload) compressed(coding string) (*Payload, error) {
	var buf bytes.Buffer
	var w io.WriteCloser = gzip.NewWriter(&buf)
	if coding == CodingDeflate {
		w = zlib.NewWriter(&buf)
	}
	if _, err := w.Write(p.Body); err != nil {
		return nil, fmt.Errorf("compress payload: %w", err)
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("compress payload: %w", err)
	}
	return &Payload{Body: buf.Bytes(), JSONLen: p.JSONLen, Coding: coding}, nil
}

// readAnswer copies an answer's body to w, decompressing it when the server
// compressed it (a client asked for that decompresses what it reads, as
// tritonclient does), and gives the decompressed byte count.
func readAnswer(w io.Writer, resp *http.Response) (int64, error) {
	var body io.Reader = resp.Body
	switch coding := strings.ToLower(resp.Header.Get("Content-Encoding")); coding {
	case "", "identity":
	case CodingGzip:
		zr, err := gzip.NewReader(resp.Body)
		if err != nil {
			return 0, fmt.Errorf("decompress answer: %w", err)
		}
		body = zr
	case CodingDeflate:
		zr, err := zlib.NewReader(resp.Body)
		if err != nil {
			return 0, fmt.Errorf("decompress answer: %w", err)
		}
		body = zr
	default:
		return 0, fmt.Errorf("answer in content coding %q, which was not asked for", coding)
	}
	return io.Copy(w, body)
}
