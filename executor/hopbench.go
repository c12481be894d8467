package executor

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	pb "github.com/gpulet/gpuletd/executor/executorpb"
	"github.com/gpulet/gpuletd/executor/tensor"
	"github.com/gpulet/gpuletd/internal/hrtimer"
	"github.com/gpulet/gpuletd/mps/execenv"
)

// HopOptions configure the daemon→executor hop benchmark.
type HopOptions struct {
	// Binary is the gpuletd binary to run the executor from; empty: this
	// process's own.
	Binary string
	// Dir holds the executor's socket.
	Dir string
	// Requests are timed after Warmup untimed ones.
	Requests, Warmup int
	// Gap is the idle time between requests; 0: back to back.
	Gap time.Duration
}

// HopResult is what the hop benchmark measured: the round trip of one
// request from the client to an executor process and back, over the Unix
// socket, with nothing to compute (an emulated model taking 1 µs).
type HopResult struct {
	Requests int     `json:"requests"`
	P50US    float64 `json:"p50_us"`
	P90US    float64 `json:"p90_us"`
	P99US    float64 `json:"p99_us"`
	MeanUS   float64 `json:"mean_us"`
	// ExecutorUS is the mean time the executor reports between arrival and
	// answer (queue + compute), so the rest is the transport.
	ExecutorUS float64 `json:"executor_us"`
}

// BenchHop starts an executor on an emulated gpu-let, loads a model whose
// batch takes 1 µs, and times requests of one 1×28×28 FP32 tensor, one at a
// time, with the eager policy.
func BenchHop(ctx context.Context, o HopOptions) (HopResult, error) {
	if o.Requests <= 0 {
		o.Requests = 20000
	}
	if o.Warmup <= 0 {
		o.Warmup = 1000
	}
	env := execenv.Env{DeviceID: "emu0", Kind: execenv.KindEmulated, Type: "hop", Partition: execenv.PartitionMPS,
		Size: 100, Emulated: "hop"}
	p, err := Spawn(SpawnOptions{Binary: o.Binary, Socket: filepath.Join(o.Dir, "hop.sock"), Env: env.Encode(),
		Args: []string{"--policy", "eager", "--log-level", "warn"}})
	if err != nil {
		return HopResult{}, err
	}
	defer func() { _ = p.Stop(5 * time.Second) }()
	rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := p.WaitReady(rctx); err != nil {
		return HopResult{}, err
	}
	_, err = p.Client.LoadModel(rctx, &pb.LoadModelRequest{
		Name: "hop", MaxBatchSize: 1, SloUs: (time.Second).Microseconds(),
		Latency: []*pb.LatencyPoint{{Batch: 1, Ms: 0.001}},
		Inputs:  []*pb.TensorSpec{{Name: "input", Datatype: "FP32", Shape: []int64{1, 28, 28}}},
		Outputs: []*pb.TensorSpec{{Name: "output", Datatype: "FP32", Shape: []int64{10}}},
	})
	if err != nil {
		return HopResult{}, fmt.Errorf("load the hop model: %w", err)
	}
	x, err := tensor.Zeros("input", tensor.FP32, []int64{1, 1, 28, 28})
	if err != nil {
		return HopResult{}, err
	}
	in := toProto([]tensor.Tensor{x})
	lat := make([]time.Duration, 0, o.Requests)
	var execUS int64
	for i := range o.Warmup + o.Requests {
		start := time.Now()
		resp, err := p.Client.Infer(ctx, &pb.InferRequest{Model: "hop", Inputs: in})
		took := time.Since(start)
		if err != nil {
			return HopResult{}, err
		}
		if resp.Code != pb.Code_OK {
			return HopResult{}, fmt.Errorf("hop request: %s: %s", resp.Code, resp.Error)
		}
		if i >= o.Warmup {
			lat = append(lat, took)
			execUS += resp.QueueUs + resp.ComputeUs
		}
		if o.Gap > 0 {
			if err := hrtimer.Sleep(ctx, o.Gap); err != nil {
				return HopResult{}, err
			}
		}
	}
	slices.Sort(lat)
	q := func(f float64) float64 { return float64(lat[int(f*float64(len(lat)-1))]) / 1e3 }
	var sum time.Duration
	for _, l := range lat {
		sum += l
	}
	return HopResult{
		Requests: len(lat), P50US: q(0.50), P90US: q(0.90), P99US: q(0.99),
		MeanUS: float64(sum) / float64(len(lat)) / 1e3, ExecutorUS: float64(execUS) / float64(len(lat)),
	}, nil
}
