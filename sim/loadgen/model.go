package loadgen

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gpulet/gpuletd/kserve"
)

// ErrUnreachable is wrapped when nothing answers at the server's address.
var ErrUnreachable = errors.New("server does not answer")

// ErrGRPCUnreachable is wrapped when nothing answers at the gRPC address a
// run sends to; it is an ErrUnreachable too.
var ErrGRPCUnreachable = fmt.Errorf("grpc %w", ErrUnreachable)

// ErrNotFound matches an HTTPError with status 404 (for a model: the server
// does not serve it).
var ErrNotFound = errors.New("not found")

// HTTPError is an answer other than 200 to a GET.
type HTTPError struct {
	URL  string
	Code int
	// Message is the server's {"error": …}, or its body.
	Message string
}

func (e *HTTPError) Error() string {
	return fmt.Sprintf("get %s: %d %s: %s", e.URL, e.Code, http.StatusText(e.Code), e.Message)
}

// Is makes a 404 match ErrNotFound.
func (e *HTTPError) Is(target error) bool {
	return target == ErrNotFound && e.Code == http.StatusNotFound
}

// Model is what the server says about a model: its metadata (inputs and
// outputs), whether dimension 0 is the batch dimension, and its SLO.
type Model struct {
	Metadata     kserve.ModelMetadata
	MaxBatchSize int
	SLO          time.Duration
	// Shapes gives, by input, the dims of one request's tensor (without
	// the batch dimension) where the input has dynamic ones: gpuletd's
	// profile_shapes (the sizes the model is planned for), with any a
	// caller sets over them (--shape). An input not named has them at 1.
	Shapes map[string][]int64
	// Stateful: the model's configuration has sequence_batching, so each
	// request belongs to a sequence (sequencePool).
	Stateful bool
	// Rows is how many rows a generated request has in a batching model
	// (Config.BatchSize); 0: one.
	Rows int
}

// SetRows makes m's generated requests n rows each (Config.BatchSize): an
// error when m cannot take them, saying why.
func (m *Model) SetRows(name string, n int) error {
	switch {
	case n <= 1:
		m.Rows = 0
		return nil
	case m.MaxBatchSize == 0:
		return fmt.Errorf("%w: %s does not batch (max_batch_size 0): its requests have no rows to send several of; give a batch size of 1", ErrConfig, name)
	case n > m.MaxBatchSize:
		return fmt.Errorf("%w: %s takes at most %d rows a request (its max_batch_size), and the batch size is %d", ErrConfig, name, m.MaxBatchSize, n)
	case m.Stateful:
		return fmt.Errorf("%w: %s is a stateful model (sequence_batching): each of a sequence's requests is one row; give a batch size of 1", ErrConfig, name)
	}
	m.Rows = n
	return nil
}

// SetShapes sets shapes over m's (Model.Shapes) for the inputs m has;
// names of no input of m are left out.
func (m *Model) SetShapes(shapes map[string][]int64) {
	for _, in := range m.Metadata.Inputs {
		dims, ok := shapes[in.Name]
		if !ok {
			continue
		}
		if m.Shapes == nil {
			m.Shapes = map[string][]int64{}
		}
		m.Shapes[in.Name] = dims
	}
}

// modelConfig is the part of GET /v2/models/{m}/config the generator reads.
type modelConfig struct {
	MaxBatchSize  int                `json:"max_batch_size"`
	SLOMS         *float64           `json:"slo_ms"`
	ProfileShapes map[string][]int64 `json:"profile_shapes"`
	// SequenceBatching is present for a stateful model.
	SequenceBatching json.RawMessage `json:"sequence_batching"`
	// EnsembleScheduling is a pipeline's steps.
	EnsembleScheduling *struct {
		Step []configStep `json:"step"`
	} `json:"ensemble_scheduling"`
}

// configStep is a pipeline step as its configuration names it.
type configStep struct {
	ModelName string `json:"model_name"`
}

// ModelPath is the protocol's path of model, of its version when one is
// given: /v2/models/{m} or /v2/models/{m}/versions/{v}.
func ModelPath(model, version string) string {
	path := "/v2/models/" + url.PathEscape(model)
	if version != "" {
		path += "/versions/" + url.PathEscape(version)
	}
	return path
}

// FetchModel reads GET /v2/models/{m} and GET /v2/models/{m}/config (of
// version, unless "") from the server at base (such as
// http://127.0.0.1:8700). The SLO is gpuletd's slo_ms; 0 from a server
// that gives none (Triton).
func FetchModel(ctx context.Context, client *http.Client, base, model, version string) (*Model, error) {
	var m Model
	path := ModelPath(model, version)
	if err := GetJSON(ctx, client, base+path, &m.Metadata); err != nil {
		return nil, fmt.Errorf("fetch model %s: %w", model, err)
	}
	var c modelConfig
	if err := GetJSON(ctx, client, base+path+"/config", &c); err != nil {
		return nil, fmt.Errorf("fetch model %s config: %w", model, err)
	}
	m.MaxBatchSize, m.Shapes, m.Stateful = c.MaxBatchSize, c.ProfileShapes, c.SequenceBatching != nil
	if c.EnsembleScheduling != nil && !m.Stateful {
		// A pipeline with a stateful step takes its requests in sequences
		// too, as perf_analyzer finds from the composing models.
		stateful, err := statefulStep(ctx, client, base, c.EnsembleScheduling.Step)
		if err != nil {
			return nil, fmt.Errorf("fetch model %s config: %w", model, err)
		}
		m.Stateful = stateful
	}
	if c.SLOMS != nil && *c.SLOMS > 0 {
		m.SLO = time.Duration(*c.SLOMS * float64(time.Millisecond))
	}
	return &m, nil
}

// statefulStep says whether one of a pipeline's steps is a stateful model
// (its configuration has sequence_batching).
func statefulStep(ctx context.Context, client *http.Client, base string, steps []configStep) (bool, error) {
	for _, st := range steps {
		var c modelConfig
		if err := GetJSON(ctx, client, base+ModelPath(st.ModelName, "")+"/config", &c); err != nil {
			return false, err
		}
		if c.SequenceBatching != nil {
			return true, nil
		}
	}
	return false, nil
}

// FetchStats reads the statistics of model from the server at base.
func FetchStats(ctx context.Context, client *http.Client, base, model string) (*kserve.StatisticsResponse, error) {
	var s kserve.StatisticsResponse
	if err := GetJSON(ctx, client, base+"/v2/models/"+url.PathEscape(model)+"/stats", &s); err != nil {
		return nil, fmt.Errorf("fetch model %s statistics: %w", model, err)
	}
	return &s, nil
}

// GetJSON fetches url and decodes its JSON answer into v. A server that
// does not answer gives ErrUnreachable, and any other status than 200 an
// *HTTPError (a 404 matches ErrNotFound).
func GetJSON(ctx context.Context, client *http.Client, url string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("build request: %w", err)
	}
	code, body, msg, err := Call(ctx, client, req, 64<<20)
	if err != nil {
		return err
	}
	if code != http.StatusOK {
		return &HTTPError{URL: url, Code: code, Message: msg}
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("decode %s: %w", url, err)
	}
	return nil
}

// Call sends req and reads the answer, up to limit bytes: its status, its
// body and, for a status other than 200, the server's message (its
// {"error": …}, else the body). A server that does not answer gives
// ErrUnreachable; a ctx that ended, its error.
func Call(ctx context.Context, client *http.Client, req *http.Request, limit int64) (code int, body []byte, msg string, err error) {
	resp, err := client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return 0, nil, "", ctx.Err()
		}
		return 0, nil, "", fmt.Errorf("%w: %w", ErrUnreachable, err)
	}
	defer resp.Body.Close()
	body, err = io.ReadAll(io.LimitReader(resp.Body, limit))
	if err != nil {
		return 0, nil, "", fmt.Errorf("read %s: %w", req.URL, err)
	}
	if resp.StatusCode != http.StatusOK {
		msg = ErrorMessage(body)
	}
	return resp.StatusCode, body, msg, nil
}

// ErrorMessage is the server's message in an error answer's body: its
// {"error": …}, else the body.
func ErrorMessage(body []byte) string {
	var e kserve.ErrorResponse
	if json.Unmarshal(body, &e) == nil && e.Error != "" {
		return e.Error
	}
	return strings.TrimSpace(string(body))
}
