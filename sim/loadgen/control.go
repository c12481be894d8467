package loadgen

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
)

// control is how a run reads what the server says of its model and sets
// up shared memory there: over REST, or over gRPC when the run sends its
// requests over gRPC (Config.GRPC), as perf_analyzer asks everything over
// the protocol it sends with, so that a server reached only by its gRPC
// listener is measured as one reached by REST.
type control interface {
	// model reads the model's metadata, configuration and SLO.
	model(ctx context.Context, model, version string) (*Model, error)
	// register registers region r; unregister takes it back.
	register(ctx context.Context, r *shmRegion) error
	unregister(ctx context.Context, r *shmRegion) error
	// outputSizes sends p once to the model and gives the bytes each
	// output of the answer takes.
	outputSizes(ctx context.Context, model, version string, p *Payload) (map[string]int64, error)
}

// restControl is control over the REST API at base.
type restControl struct {
	client *http.Client
	base   string
}

func (c restControl) model(ctx context.Context, model, version string) (*Model, error) {
	return FetchModel(ctx, c.client, c.base, model, version)
}

func (c restControl) register(ctx context.Context, r *shmRegion) error {
	body, err := json.Marshal(r.registerJSON())
	if err != nil {
		return fmt.Errorf("encode register request: %w", err)
	}
	return post(ctx, c.client, c.base+r.extension()+url.PathEscape(r.name)+"/register", body)
}

func (c restControl) unregister(ctx context.Context, r *shmRegion) error {
	return post(ctx, c.client, c.base+r.extension()+url.PathEscape(r.name)+"/unregister", nil)
}

func (c restControl) outputSizes(ctx context.Context, model, version string, p *Payload) (map[string]int64, error) {
	return outputSizes(ctx, c.client, c.base, ModelPath(model, version), p)
}
