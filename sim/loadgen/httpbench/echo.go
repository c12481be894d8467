package httpbench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/gpulet/gpuletd/internal/ctxsleep"
	"github.com/gpulet/gpuletd/kserve"
	"github.com/gpulet/gpuletd/sim/loadgen"
)

// answer is the daemon's answer to the payload, which the echo returns
// byte for byte.
type answer struct {
	body   []byte
	header http.Header
}

// First answers are tried up to firstTries times, firstRetryWait apart,
// while the daemon refuses them as passing (503): one refusal as
// deadline_unreachable right after the model turned ready (not traced
// further; it did not come back) ended a whole bench run.
const (
	firstTries     = 5
	firstRetryWait = 200 * time.Millisecond
)

// errPassing marks a refusal worth trying again.
var errPassing = errors.New("refused for now")

// firstAnswer sends the payload and keeps the answer, trying again while
// the daemon refuses it as passing.
func firstAnswer(ctx context.Context, client *http.Client, base, model string, p *loadgen.Payload) (*answer, error) {
	return tryFirst(ctx, func() (*answer, error) { return firstAnswerOnce(ctx, client, base, model, p) },
		func(err error) bool { return errors.Is(err, errPassing) })
}

// tryFirst calls once until it answers, fails for good (passing says
// whether a failure is worth another try) or has been tried firstTries
// times, firstRetryWait apart; the error says which try failed.
func tryFirst[T any](ctx context.Context, once func() (T, error), passing func(error) bool) (T, error) {
	var zero T
	for try := 1; ; try++ {
		v, err := once()
		if err == nil {
			return v, nil
		}
		if !passing(err) || try == firstTries {
			return zero, fmt.Errorf("try %d: %w", try, err)
		}
		if err := ctxsleep.Sleep(ctx, firstRetryWait); err != nil {
			return zero, err
		}
	}
}

// firstAnswerOnce sends the payload once.
func firstAnswerOnce(ctx context.Context, client *http.Client, base, model string, p *loadgen.Payload) (*answer, error) {
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
	if resp.StatusCode == http.StatusServiceUnavailable {
		return nil, fmt.Errorf("first request: %s: %s: %w", resp.Status, bytes.TrimSpace(body), errPassing)
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
