package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpulet/gpuletd/executor/onnxrt"
	"github.com/gpulet/gpuletd/internal/testbin"
	"github.com/gpulet/gpuletd/modelzoo"
	"github.com/stretchr/testify/require"
)

// pageModels are the models of the daemon under test; on emulated V100s
// lenet5 and mlp follow alexnet's curve, resnet18 resnet50's (modelzoo).
var pageModels = []string{"lenet5", "mlp", "resnet18"}

// daemon is a gpuletd serve process the test started.
type daemon struct {
	base string
	logs *testbin.SyncBuffer
}

// startDaemon writes a model repository of pageModels and a config for two
// emulated V100s, starts the daemon and waits until every model is ready
// and placed. The daemon is stopped with SIGINT when the test ends.
func startDaemon(t *testing.T) *daemon {
	t.Helper()
	return startDaemonWith(t, pageModels, "", nil)
}

// startDaemonWith is startDaemon serving models, with more configuration
// (YAML lines; a devices line among them replaces the two emulated V100s)
// and a hook that adds to the repository before the start.
func startDaemonWith(t *testing.T, models []string, moreConf string, addToRepo func(repo string)) *daemon {
	t.Helper()
	dir := t.TempDir()
	bin := testbin.Gpuletd(t)
	repo := filepath.Join(dir, "models")
	require.NoError(t, modelzoo.WriteRepository(repo, models, 1))
	if addToRepo != nil {
		addToRepo(repo)
	}
	lib, err := onnxrt.FindLibrary("")
	require.NoError(t, err, "ONNX Runtime's library (make deps)")
	addr := freeAddr(t)
	devices := "devices: [{kind: emulated, profiles: igniter-v100, count: 2}]\n"
	if strings.Contains(moreConf, "devices:") {
		devices = "" // moreConf gives its own
	}
	conf := fmt.Sprintf(`listen: %q
grpc_listen: ""
metrics: {listen: "127.0.0.1:0"}
state_dir: %q
runtime_dir: %q
model_repository: %q
log: {level: info, format: json}
%sscheduler:
  # Only surges and explicit calls re-plan during the test.
  reorganize_period: 1h
onnxruntime: {library: %q}
`, addr, filepath.Join(dir, "state"), filepath.Join(dir, "run"), repo, devices, lib) + moreConf
	confPath := filepath.Join(dir, "gpuletd.yaml")
	require.NoError(t, os.WriteFile(confPath, []byte(conf), 0o600))

	cmd := exec.Command(bin, "serve", "--config", confPath)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GPULETD_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	d := &daemon{base: "http://" + addr, logs: &testbin.SyncBuffer{}}
	cmd.Stdout, cmd.Stderr = d.logs, d.logs
	require.NoError(t, cmd.Start())
	// exited is closed when the process has ended; waitErr is then its
	// exit status.
	exited := make(chan struct{})
	var waitErr error
	go func() {
		waitErr = cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		select {
		case <-exited:
			return // it ended early, which the test has reported
		default:
		}
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-exited:
			require.NoError(t, waitErr, "daemon exits cleanly on SIGINT; logs:\n%s", d.logs)
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
			t.Errorf("daemon did not stop within 30s of SIGINT; logs:\n%s", d.logs)
		}
	})
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			t.Fatalf("daemon exited early: %v\n%s", waitErr, d.logs)
		default:
		}
		if st, err := d.status(); err == nil && st.Plan != nil && allReady(st, models) {
			return d
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("daemon did not place every model in time; logs:\n%s", d.logs)
	return nil
}

// allReady tells whether every one of models is ready and placed, and
// the status lists no other model that is.
func allReady(st apiStatus, models []string) bool {
	ready := 0
	for _, m := range st.Models {
		if m.Ready && len(m.PlacedOn) > 0 {
			ready++
		} else if slices.Contains(models, m.Name) {
			return false
		}
	}
	return ready == len(models)
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	return ln.Addr().String()
}

// apiStatus is the part of GET /api/v1/status the test compares with the
// page.
type apiStatus struct {
	Devices []struct {
		ID string `json:"id"`
	} `json:"devices"`
	Gpulets []struct {
		ID     string `json:"id"`
		Device string `json:"device"`
		Size   int    `json:"size"`
		State  string `json:"state"`
		Memory *struct {
			HostBytes int64 `json:"host_bytes"`
		} `json:"memory"`
		Models []struct {
			Name  string  `json:"name"`
			Batch int     `json:"batch"`
			Rate  float64 `json:"rate"`
		} `json:"models"`
	} `json:"gpulets"`
	Models []struct {
		Name     string   `json:"name"`
		Ready    bool     `json:"ready"`
		PlacedOn []string `json:"placed_on"`
	} `json:"models"`
	Plan            json.RawMessage `json:"plan"`
	PlanReason      string          `json:"plan_reason"`
	Reorganizations int64           `json:"reorganizations"`
}

// partitions is the status's cut of the devices, one line per gpu-let:
// "device id size state model,model".
func (s apiStatus) partitions() []string {
	var out []string
	for _, g := range s.Gpulets {
		var names []string
		for _, m := range g.Models {
			names = append(names, m.Name)
		}
		out = append(out, fmt.Sprintf("%s %s %d %s %s", g.Device, g.ID, g.Size, g.State, strings.Join(names, ",")))
	}
	return out
}

func (d *daemon) status() (apiStatus, error) {
	var st apiStatus
	err := d.getJSON("/api/v1/status", &st)
	return st, err
}

func (d *daemon) getJSON(path string, v any) error {
	resp, err := http.Get(d.base + path)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("get %s: %s", path, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(v)
}

// imageRequest is one inference request of one 28×28 image for lenet5
// ([1,1,28,28]) or mlp ([1,784]).
func imageRequest(model string) []byte {
	shape := "[1,1,28,28]"
	if model == "mlp" {
		shape = "[1,784]"
	}
	vals := make([]string, 28*28)
	for i := range vals {
		vals[i] = fmt.Sprintf("%.2f", float64(i%13)/13)
	}
	return []byte(`{"inputs":[{"name":"input","shape":` + shape + `,"datatype":"FP32","data":[` + strings.Join(vals, ",") + `]}]}`)
}

// drive sends requests for model (lenet5 or mlp) from workers goroutines,
// as fast as they are answered, until ctx ends; it returns the answers by
// status code.
func (d *daemon) drive(ctx context.Context, model string, workers int) map[int]int {
	body := imageRequest(model)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: workers}}
	defer client.CloseIdleConnections()
	var mu sync.Mutex
	codes := map[int]int{}
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for ctx.Err() == nil {
				req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.base+"/v2/models/"+model+"/infer", bytes.NewReader(body))
				if err != nil {
					return
				}
				req.Header.Set("Content-Type", "application/json")
				resp, err := client.Do(req)
				if err != nil {
					time.Sleep(10 * time.Millisecond) // ctx ended, or the listener is busy
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				mu.Lock()
				codes[resp.StatusCode]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return codes
}
