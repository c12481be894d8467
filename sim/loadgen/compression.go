package loadgen

import (
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/gpulet/gpuletd/kserve"
)

// The codings Config.Compression takes: HTTP's and gRPC's names alike.
const (
	CodingGzip    = kserve.CodingGzip
	CodingDeflate = kserve.CodingDeflate
)

// compressed is p with its body compressed in coding, once before a run, so
// that every request carries the same compressed bytes.
func (p *Payload) compressed(coding string) (*Payload, error) {
	body, err := kserve.Compress(coding, p.Body)
	if err != nil {
		return nil, fmt.Errorf("compress payload: %w", err)
	}
	return &Payload{Body: body, JSONLen: p.JSONLen, Coding: coding}, nil
}

// readAnswer copies an answer's body to w, decompressing it when the server
// compressed it (a client that asked for that decompresses what it reads,
// as tritonclient does), and gives the decompressed byte count.
func readAnswer(w io.Writer, resp *http.Response) (int64, error) {
	coding := strings.ToLower(resp.Header.Get("Content-Encoding"))
	if coding == "" || coding == "identity" {
		return io.Copy(w, resp.Body)
	}
	dec, err := kserve.NewDecompressor(coding, resp.Body)
	if err != nil {
		return 0, fmt.Errorf("decompress answer: %w", err)
	}
	defer dec.Close()
	n, err := io.Copy(w, dec)
	if err != nil {
		return n, fmt.Errorf("decompress answer: %w", err)
	}
	return n, nil
}
