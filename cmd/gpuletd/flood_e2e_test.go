package main

import (
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/modelzoo"
)

// floodResult counts a load's answers by status and failure reason.
type floodResult struct {
	mu      sync.Mutex
	codes   map[int]int
	reasons map[string]int
}

func (f *floodResult) add(code int, msg string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.codes[code]++
	if code != 200 {
		f.reasons[msg]++
	}
}

// openLoop sends body to model at rate per second until ctx ends, whether
// or not earlier requests were answered (at most 64 in flight).
func openLoop(ctx context.Context, wg *sync.WaitGroup, base, model string, rate float64, body []byte, header map[string]string) *floodResult {
	res := &floodResult{codes: map[int]int{}, reasons: map[string]int{}}
	client := &http.Client{Timeout: 20 * time.Second}
	slots := make(chan struct{}, 64)
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(time.Duration(float64(time.Second) / rate))
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			select {
			case slots <- struct{}{}:
			default:
				continue // the flood is open loop: a full client drops
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() { <-slots }()
				req, _ := http.NewRequest("POST", base+"/v2/models/"+model+"/infer", bytesReader(body))
				for k, v := range header {
					req.Header.Set(k, v)
				}
				resp, err := client.Do(req)
				if err != nil {
					res.add(0, err.Error())
					return
				}
				var e struct {
					Error string `json:"error"`
				}
				_ = json.NewDecoder(resp.Body).Decode(&e)
				_ = resp.Body.Close()
				res.add(resp.StatusCode, e.Error)
			}()
		}
	}()
	return res
}

// TestFloodOnOneModelSparesTheOthers floods resnet18 on the CPU device at
// 60 req/s, about what the node can serve of it by its profile and 3× what
// this machine sustains with its own clients running, while mlp gets
// light traffic: the planner keeps mlp's place (the planner alone would
// give every core to resnet18), mlp is answered, and resnet18's excess is
// refused for resnet18 only.
func TestFloodOnOneModelSparesTheOthers(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds and runs the binary")
	}
	repo := filepath.Join(t.TempDir(), "models")
	require.NoError(t, modelzoo.WriteRepository(repo, []string{"mlp", "resnet18"}, 1))
	// A generous SLO for the probes: the point is that mlp keeps a place and
	// its turns, not its latency on a two-core test machine whose cores
	// also run this test's clients (batches there run well past their
	// profile, which the plan cannot know).
	setProfile(t, repo, "mlp", "alexnet", "400ms")
	addr, logs := startDaemon(t, daemonEnv(t, "GPULETD_MODEL_REPOSITORY="+repo, "GPULETD_DEVICES=cpu"))
	base := "http://" + addr
	require.Eventually(t, func() bool {
		return do(t, "GET", base+"/v2/models/mlp/ready", nil, nil).code == 200 &&
			do(t, "GET", base+"/v2/models/resnet18/ready", nil, nil).code == 200
	}, 3*time.Minute, 200*time.Millisecond, "logs:\n%s", logs)

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	flood := openLoop(ctx, &wg, base, "resnet18", 60, resnetJSON(), map[string]string{"Inference-Header-Content-Length": strconv.Itoa(resnetHeadLen)})
	time.Sleep(8 * time.Second) // the node re-plans for the flood
	probes := openLoop(ctx, &wg, base, "mlp", 10, mlpJSON(1), nil)
	time.Sleep(25 * time.Second)
	cancel()
	wg.Wait()

	total := 0
	for _, n := range probes.codes {
		total += n
	}
	require.Greater(t, total, 150)
	ev := do(t, "GET", base+"/api/v1/events?limit=1000", nil, nil)
	// Before the fair share the flood took mlp's gpu-let and 80% of the
	// probes were refused; what is left now comes from re-plans that move
	// the CPU's cores (a model waits while its gpu-lets swap) and from
	// this test's clients running on the same two cores.
	require.GreaterOrEqual(t, float64(probes.codes[200]), 0.85*float64(total),
		"mlp is answered during resnet18's flood: %v %v; events:\n%s", probes.codes, probes.reasons, ev.body)
	require.Positive(t, flood.codes[503], "resnet18's excess is refused: %v", flood.codes)
	require.Positive(t, flood.codes[200], "resnet18 keeps its share: %v", flood.codes)
	placed := false
	for _, g := range getStatus(t, base).Gpulets {
		for _, m := range g.Models {
			placed = placed || m.Name == "mlp"
		}
	}
	require.True(t, placed, "mlp keeps a gpu-let")
	// Whether the planner itself sees the flood as overload depends on how
	// fast the quick profile measured resnet18 on this loaded machine (47
	// to 59 req/s over runs); control's tests cover the fair share, this
	// test what the node does either way.
}
