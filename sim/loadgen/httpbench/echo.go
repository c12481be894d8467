package httpbench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"github.com/gpulet/gpuletd/kserve"
	"github.com/gpulet/gpuletd/sim/loadgen"
)

// answer is the daemon's answer to the payload, which the echo returns
// byte for byte.
type answer struct {
	body   []byte
	header http.Header
}

// firstAnswer sends the payload once and keeps the answer.
func firstAnswer(ctx context.Context, client *http.Client, base, model string, p *loadgen.Payload) (*answer, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v2/models/"+model+"/infer", bytes.NewReader(p.Body))
	if err != nil {
		return nil, fmt.Errorf("build request: %w", err)
	}
	if p.JSONLen >= 0 {
		req.Header.Set("Content-Type", "application/octet-stream")
		req.Header.Set(kserve.HeaderContentLength, strconv.FormatInt(p.JSONLen, 10))
	} else {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("first request: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("read first answer: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("first request: %s: %s", resp.Status, bytes.TrimSpace(body))
	}
	h := http.Header{}
	for _, k := range []string{"Content-Type", kserve.HeaderContentLength} {
		if v := resp.Header.Get(k); v != "" {
			h.Set(k, v)
		}
	}
	return &answer{body: body, header: h}, nil
}
