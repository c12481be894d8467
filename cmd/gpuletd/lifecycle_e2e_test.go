package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/gpulet/gpuletd/internal/testbin"
	"github.com/gpulet/gpuletd/modelzoo"
	"github.com/stretchr/testify/require"
)

// statusDoc is the part of /api/v1/status these tests read.
type statusDoc struct {
	Gpulets []struct {
		ID        string  `json:"id"`
		Device    string  `json:"device"`
		Size      int     `json:"size"`
		PID       int     `json:"pid"`
		State     string  `json:"state"`
		BusyRatio float64 `json:"busy_ratio"`
		Stalled   string  `json:"stalled_since"`
		Models    []struct {
			Name string `json:"name"`
		} `json:"models"`
	} `json:"gpulets"`
	Models []struct {
		Name     string   `json:"name"`
		Ready    bool     `json:"ready"`
		Reason   string   `json:"reason"`
		Warnings []string `json:"warnings"`
	} `json:"models"`
	Reorganizations int64 `json:"reorganizations"`
	Restarts        int64 `json:"executor_restarts"`
}

func getStatus(t *testing.T, base string) statusDoc {
	t.Helper()
	r := do(t, "GET", base+"/api/v1/status", nil, nil)
	require.Equal(t, 200, r.code)
	var s statusDoc
	require.NoError(t, json.Unmarshal(r.body, &s))
	return s
}

// driver sends mlp (and lenet5) requests from a few goroutines until
// stopped and counts the answers by status code.
type driver struct {
	codes  sync.Map // int → *atomic.Int64
	stop   chan struct{}
	wg     sync.WaitGroup
	failed atomic.Int64
}

func drive(t *testing.T, base string, model string, workers int, gap time.Duration) *driver {
	d := &driver{stop: make(chan struct{})}
	body := mlpJSON(1)
	if model == "lenet5" {
		body = lenetJSON()
	}
	client := &http.Client{Timeout: 30 * time.Second}
	for range workers {
		d.wg.Add(1)
		go func() {
			defer d.wg.Done()
			for {
				select {
				case <-d.stop:
					return
				default:
				}
				resp, err := client.Post(base+"/v2/models/"+model+"/infer", "application/json", bytesReader(body))
				code := 0
				if err == nil {
					code = resp.StatusCode
					resp.Body.Close()
				}
				v, _ := d.codes.LoadOrStore(code, &atomic.Int64{})
				v.(*atomic.Int64).Add(1)
				if code != 200 {
					d.failed.Add(1)
				}
				time.Sleep(gap)
			}
		}()
	}
	return d
}

// poller asks GET /v2/health/ready every 10 ms until halted, counting the
// answers by status code (0: none).
type poller struct {
	stop, done chan struct{}
	codes      map[int]int
}

func pollReadiness(base string) *poller {
	p := &poller{stop: make(chan struct{}), done: make(chan struct{}), codes: map[int]int{}}
	client := &http.Client{Timeout: 5 * time.Second}
	go func() {
		defer close(p.done)
		for {
			select {
			case <-p.stop:
				return
			case <-time.After(10 * time.Millisecond):
			}
			code := 0
			if resp, err := client.Get(base + "/v2/health/ready"); err == nil {
				code = resp.StatusCode
				resp.Body.Close()
			}
			p.codes[code]++
		}
	}()
	return p
}

// requireReadyThroughout stops the polls and requires that every one was
// answered 200.
func (p *poller) requireReadyThroughout(t *testing.T) {
	t.Helper()
	close(p.stop)
	<-p.done
	require.Positive(t, p.codes[200])
	require.Equal(t, []int{200}, slices.Collect(maps.Keys(p.codes)), "/v2/health/ready answered 200 throughout: %v", p.codes)
}

// requireAnsweredOrRefused requires that model's requests, counted by
// status code, were answered (200) or refused with a retry (503: a missed
// deadline, a model without a gpu-let for a moment), never lost.
func requireAnsweredOrRefused(t *testing.T, model string, codes map[int]int64) {
	t.Helper()
	for code, n := range codes {
		require.Contains(t, []int{200, 503}, code, "%s answered %d ×%d", model, code, n)
	}
}

// surge drives mlp and lenet5 with 16 workers each, while readiness is
// polled, so that the daemon re-plans them onto gpu-lets of their own.
type surge struct {
	mlp, lenet5 *driver
	readiness   *poller
}

// surgeUntilReplanned starts a surge and waits for the re-plan it causes.
func surgeUntilReplanned(t *testing.T, base string, logs *testbin.SyncBuffer) *surge {
	t.Helper()
	before := getStatus(t, base)
	s := &surge{readiness: pollReadiness(base)}
	s.mlp, s.lenet5 = drive(t, base, "mlp", 16, 0), drive(t, base, "lenet5", 16, 0)
	require.Eventually(t, func() bool { return getStatus(t, base).Reorganizations > before.Reorganizations },
		60*time.Second, 200*time.Millisecond, "rates surged, so the daemon re-plans; logs:\n%s", logs)
	return s
}

// requireServedThroughout halts the surge and requires that both models
// were served and lost no request (deadline misses are SLO violations,
// 503, not lost requests; nothing may fail for another reason, such as a
// request sent to a retired executor), and that the node answered ready
// throughout.
func (s *surge) requireServedThroughout(t *testing.T) {
	t.Helper()
	ca, cb := s.mlp.halt(), s.lenet5.halt()
	s.readiness.requireReadyThroughout(t)
	require.Greater(t, ca[200], int64(50))
	require.Greater(t, cb[200], int64(50))
	requireAnsweredOrRefused(t, "mlp", ca)
	requireAnsweredOrRefused(t, "lenet5", cb)
}

func (d *driver) halt() map[int]int64 {
	close(d.stop)
	d.wg.Wait()
	out := map[int]int64{}
	d.codes.Range(func(k, v any) bool {
		out[k.(int)] = v.(*atomic.Int64).Load()
		return true
	})
	return out
}

func lenetJSON() []byte {
	vals := make([]byte, 0, 784*2)
	for i := 0; i < 784; i++ {
		if i > 0 {
			vals = append(vals, ',')
		}
		vals = append(vals, '0')
	}
	return []byte(`{"inputs":[{"name":"input","shape":[1,1,28,28],"datatype":"FP32","data":[` + string(vals) + `]}]}`)
}

// TestReorganizationLosesNoRequest raises two models' rates so that the
// planner re-plans and moves them to new gpu-lets, while requests keep
// flowing: none of them may fail during the switch, and the node stays
// ready for a load balancer.
func TestReorganizationLosesNoRequest(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds and runs the binary")
	}
	// Slow curves (V100 vgg19 and ssd) so that a test's load changes the
	// layout: packed while idle, at 1 req/s both share a 20% gpu-let; from
	// about 50 req/s each they get gpu-lets of their own.
	base, logs, _ := emulatedDaemon(t, []string{"mlp", "lenet5"}, "GPULETD_TEST_PROFILES=mlp:vgg19,lenet5:ssd", "GPULETD_SCHEDULER_IDLE_PLAN=pack")
	before := getStatus(t, base)
	s := surgeUntilReplanned(t, base, logs)
	time.Sleep(500 * time.Millisecond) // requests keep flowing after the switch
	s.requireServedThroughout(t)
	after := getStatus(t, base)
	require.NotEqual(t, before.Gpulets, after.Gpulets, "the gpu-lets changed")
	events := do(t, "GET", base+"/api/v1/events?limit=1000", nil, nil)
	require.Contains(t, string(events.body), `"kind":"reorganize"`)
	failures := do(t, "GET", base+"/metrics", nil, nil)
	require.NotContains(t, string(failures.body), `reason="executor_failed"`, "no request was lost with its executor")
	require.Contains(t, string(failures.body), "\ngpuletd_gpulet_starts_total{how=\"after_drain\"} 0\n", "every start fitted beside the old gpu-lets")
	require.NotContains(t, string(failures.body), `reason="unavailable"`, "no request reached a draining executor")
}

// TestReorganizationOnAFullGPU re-plans, under load, an emulated GPU whose
// memory holds the plan but not the old gpu-lets and the new at once (vgg19
// and ssd take 1.6 and 0.8 GiB a copy on 3 GiB; resnet18, 0.7 GiB, is left
// a second GPU), as a real GPU's does: the new gpu-lets' loads are refused
// for memory while the old ones run, so they start once those have
// drained. No request is lost meanwhile (those that find no gpu-let are
// refused with a retry), the reorganize event says what happened, the node
// stays ready for a load balancer while resnet18 serves (before, 19 of 399
// polls read 503 here), and both models serve after.
func TestReorganizationOnAFullGPU(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds and runs the binary")
	}
	base, logs, _ := emulatedDaemon(t, []string{"mlp", "lenet5", "resnet18"}, "GPULETD_TEST_PROFILES=mlp:vgg19,lenet5:ssd,resnet18:resnet50",
		"GPULETD_DEVICES=[{kind: emulated, profiles: igniter-v100, count: 2, memory_gb: 3}]", "GPULETD_SCHEDULER_IDLE_PLAN=pack")
	// The plan preview foresees it: at a surge's rates what starts on emu0
	// does not fit beside what runs there.
	code, out, stderr := runCLI(t, "plan", "--url", base, "--rate", "mlp=1000,lenet5=1000")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, out, "\non emu0 what starts and loads does not fit beside what runs there: it waits for\n  the old gpu-lets to drain")
	s := surgeUntilReplanned(t, base, logs)
	require.Eventually(t, func() bool {
		for _, m := range []string{"mlp", "lenet5"} {
			if do(t, "GET", base+"/v2/models/"+m+"/ready", nil, nil).code != http.StatusOK {
				return false
			}
		}
		return true
	}, 60*time.Second, 100*time.Millisecond, "both models serve again; logs:\n%s", logs)
	time.Sleep(500 * time.Millisecond)
	s.requireServedThroughout(t)
	_, evs, _ := runCLI(t, "events", "--url", base, "--kind", "reorganize")
	require.Contains(t, evs, "did not fit beside the old ones", "the new gpu-lets waited for the old ones' memory")
	failures := do(t, "GET", base+"/metrics", nil, nil)
	require.NotContains(t, string(failures.body), `reason="executor_failed"`, "no request was lost with its executor")
	require.Regexp(t, `\ngpuletd_gpulet_starts_total\{how="after_drain"\} [1-9]`, string(failures.body), "the metrics count the starts that waited")
}

// TestKilledExecutorIsRestarted kills one executor with SIGKILL under load:
// its in-flight requests get an error at once, it is restarted, and the
// other model goes on unaffected.
func TestKilledExecutorIsRestarted(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds and runs the binary")
	}
	base, logs, _ := emulatedDaemon(t, []string{"mlp", "lenet5"}, "GPULETD_TEST_PROFILES=mlp:vgg19,lenet5:ssd")
	// Load both models until the plan gives each its own gpu-let (at about
	// 100 req/s each they still share one whole-GPU gpu-let; the load must
	// be well above that even on a loaded test machine).
	a := drive(t, base, "mlp", 48, 0)
	b := drive(t, base, "lenet5", 48, 0)
	var victim string
	var pid int
	apart := func() bool {
		st := getStatus(t, base)
		where := map[string]string{}
		for _, g := range st.Gpulets {
			for _, m := range g.Models {
				where[m.Name] = g.ID
				if m.Name == "mlp" && g.State == "ready" {
					victim, pid = g.ID, g.PID
				}
			}
		}
		return where["mlp"] != "" && where["lenet5"] != "" && where["mlp"] != where["lenet5"] && len(st.Gpulets) == 2
	}
	require.Eventually(t, apart, 60*time.Second, 200*time.Millisecond, "the models get gpu-lets of their own; logs:\n%s", logs)
	// The node stays ready for a load balancer throughout: lenet5 serves
	// while mlp's executor is started again.
	readiness := pollReadiness(base)
	// Count only what happens around the kill.
	a.halt()
	b.halt()
	a = drive(t, base, "mlp", 8, time.Millisecond)
	b = drive(t, base, "lenet5", 8, time.Millisecond)
	time.Sleep(300 * time.Millisecond)
	// A re-plan for the lower load may have replaced the gpu-let meanwhile:
	// kill mlp's executor as the status shows it now.
	var killErr error
	require.Eventually(t, func() bool {
		if !apart() {
			return false
		}
		killErr = syscall.Kill(pid, syscall.SIGKILL)
		return !errors.Is(killErr, syscall.ESRCH)
	}, 60*time.Second, 100*time.Millisecond, "mlp's executor is found apart from lenet5's; logs:\n%s", logs)
	require.NoError(t, killErr)
	require.Eventually(t, func() bool {
		s := getStatus(t, base)
		for _, g := range s.Gpulets {
			if g.ID == victim && g.State == "ready" && g.PID != pid && g.PID != 0 {
				return s.Restarts >= 1
			}
		}
		return false
	}, 60*time.Second, 100*time.Millisecond, "the executor comes back; logs:\n%s", logs)
	time.Sleep(300 * time.Millisecond)
	ca, cb := a.halt(), b.halt()
	readiness.requireReadyThroughout(t)
	require.Zero(t, cb[0], "no request hangs or breaks")
	require.Positive(t, cb[200])
	require.LessOrEqual(t, float64(cb[503]), 0.05*float64(cb[200]+cb[503]), "the other model is unaffected: %v", cb)
	requireAnsweredOrRefused(t, "lenet5", cb)
	require.Greater(t, ca[200], int64(0))
	require.Zero(t, ca[0], "in-flight requests of the killed executor are answered, not dropped")
	require.Greater(t, ca[503], int64(0), "requests in flight when it died are answered 503")
	ev := do(t, "GET", base+"/api/v1/events?limit=1000", nil, nil)
	require.Contains(t, string(ev.body), "executor_restart")
}

// TestModelLoadedThroughRepositoryIsPlaced adds a model to the repository
// while the daemon runs and loads it through the repository API.
func TestModelLoadedThroughRepositoryIsPlaced(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds and runs the binary")
	}
	base, _, repo := emulatedDaemon(t, []string{"mlp"})
	require.Equal(t, 404, do(t, "GET", base+"/v2/models/lenet5", nil, nil).code)
	extra := filepath.Join(t.TempDir(), "more")
	require.NoError(t, modelzoo.WriteRepository(extra, []string{"lenet5"}, 1))
	setProfile(t, extra, "lenet5", "alexnet", "200ms") // loading, not timing, is under test
	require.NoError(t, os.Rename(filepath.Join(extra, "lenet5"), filepath.Join(repo, "lenet5")))
	// A model the planner cannot place yet (no latency profile) is not
	// answered READY, as Triton fails a load whose model does not become
	// ready: the answer says why.
	require.NoError(t, modelzoo.WriteRepository(extra, []string{"vgg"}, 1))
	require.NoError(t, os.WriteFile(filepath.Join(extra, "vgg", "config.yaml"), []byte("slo: 200ms\nmax_batch_size: 8\n"), 0o644))
	require.NoError(t, os.Rename(filepath.Join(extra, "vgg"), filepath.Join(repo, "vgg")))
	r := do(t, "POST", base+"/v2/repository/models/vgg/load", nil, nil)
	require.Equal(t, 503, r.code, string(r.body))
	require.Contains(t, string(r.body), "vgg loaded but not served")
	require.Contains(t, string(r.body), "no latency profile")
	require.Equal(t, 503, do(t, "GET", base+"/v2/models/vgg/ready", nil, nil).code)

	r = do(t, "POST", base+"/v2/repository/models/lenet5/load", nil, nil)
	require.Equal(t, 200, r.code, string(r.body))
	require.Equal(t, 200, do(t, "GET", base+"/v2/models/lenet5/ready", nil, nil).code)
	r = do(t, "POST", base+"/v2/models/lenet5/infer", lenetJSON(), nil)
	require.Equal(t, 200, r.code, string(r.body))
	placed := false
	for _, g := range getStatus(t, base).Gpulets {
		for _, m := range g.Models {
			placed = placed || m.Name == "lenet5"
		}
	}
	require.True(t, placed)

	// A load whose folder no longer loads (a file copied in half) fails
	// and keeps the model serving what it was loaded from, which the
	// history and the model's warnings say, since a restart would leave
	// it out; a load of the mended folder clears the warning.
	file := filepath.Join(repo, "lenet5", "1", "model.onnx")
	good, err := os.ReadFile(file)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(file, good[:len(good)/2], 0o644))
	r = do(t, "POST", base+"/v2/repository/models/lenet5/load", nil, nil)
	require.Equal(t, 400, r.code, string(r.body))
	require.Contains(t, string(r.body), "not an ONNX model")
	r = do(t, "POST", base+"/v2/models/lenet5/infer", lenetJSON(), nil)
	require.Equal(t, 200, r.code, string(r.body))
	require.Equal(t, []string{"lenet5"}, staleWarned(t, base))
	ev := string(do(t, "GET", base+"/api/v1/events?limit=1000", nil, nil).body)
	require.Contains(t, ev, "loading lenet5 failed: ")
	require.Contains(t, ev, "it keeps serving the files it was loaded from before, which a restart would not find")
	require.Contains(t, ev, "loading vgg failed: model vgg loaded but not served", "a load left unservable is in the history too")
	require.NoError(t, os.WriteFile(file, good, 0o644))
	r = do(t, "POST", base+"/v2/repository/models/lenet5/load", nil, nil)
	require.Equal(t, 200, r.code, string(r.body))
	require.Empty(t, staleWarned(t, base))

	// So does a load of a configuration this node can never serve (an SLO
	// no batch meets), which used to leave the serving model unservable.
	setProfile(t, repo, "lenet5", "alexnet", "10us")
	r = do(t, "POST", base+"/v2/repository/models/lenet5/load", nil, nil)
	require.Equal(t, 400, r.code, string(r.body))
	require.Contains(t, string(r.body), "lenet5 as it reads now cannot be served on this node: SLO 0.01 ms: no batch meets it on any gpu-let")
	require.Contains(t, string(r.body), "lenet5 serves on as it was loaded before")
	require.Equal(t, 200, do(t, "GET", base+"/v2/models/lenet5/ready", nil, nil).code)
	r = do(t, "POST", base+"/v2/models/lenet5/infer", lenetJSON(), nil)
	require.Equal(t, 200, r.code, string(r.body))
	require.Equal(t, []string{"lenet5"}, staleWarned(t, base))
	setProfile(t, repo, "lenet5", "alexnet", "200ms")
	r = do(t, "POST", base+"/v2/repository/models/lenet5/load", nil, nil)
	require.Equal(t, 200, r.code, string(r.body))
	require.Empty(t, staleWarned(t, base))
}

// staleWarned names the models whose status warns that their folder no
// longer loads.
func staleWarned(t *testing.T, base string) []string {
	t.Helper()
	var out []string
	for _, m := range getStatus(t, base).Models {
		for _, w := range m.Warnings {
			if strings.Contains(w, "its folder in the model repository does not load") {
				out = append(out, m.Name)
			}
		}
	}
	return out
}

// TestSIGTERMAnswersQueuedRequests stops the daemon while requests are in
// flight: each is answered and the daemon exits cleanly.
func TestSIGTERMAnswersQueuedRequests(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds and runs the binary")
	}
	repo := filepath.Join(t.TempDir(), "models")
	require.NoError(t, modelzoo.WriteRepository(repo, []string{"resnet18"}, 1))
	addr := freeAddr(t)
	cmd := exec.Command(testbin.Gpuletd(t), "serve")
	cmd.Env = daemonEnv(t, "GPULETD_MODEL_REPOSITORY="+repo, "GPULETD_LISTEN="+addr,
		"GPULETD_DEVICES=[{kind: emulated, profiles: igniter-v100, count: 1}]", "GPULETD_LIMITS_SHUTDOWN_TIMEOUT=30s")
	logs := &testbin.SyncBuffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	require.NoError(t, cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	base := "http://" + addr
	require.Eventually(t, func() bool {
		resp, err := http.Get(base + "/v2/models/resnet18/ready")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == 200
	}, 60*time.Second, 100*time.Millisecond, "logs:\n%s", logs)
	body := resnetJSON()
	var wg sync.WaitGroup
	codes := make([]int, 16)
	for i := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, "POST", base+"/v2/models/resnet18/infer", bytesReader(body))
			req.Header.Set("Inference-Header-Content-Length", strconv.Itoa(resnetHeadLen))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				codes[i] = -1
				return
			}
			resp.Body.Close()
			codes[i] = resp.StatusCode
		}()
	}
	// Every request has reached a handler (a connection the listener had
	// not accepted yet would be refused once the daemon stops listening).
	require.Eventually(t, func() bool {
		r := do(t, "GET", base+"/metrics", nil, nil)
		return strings.Contains(string(r.body), `gpuletd_requests_total{model="resnet18"} 16`)
	}, 30*time.Second, 5*time.Millisecond, "logs:\n%s", logs)
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	wg.Wait()
	select {
	case err := <-done:
		require.NoError(t, err, "logs:\n%s", logs)
	case <-time.After(60 * time.Second):
		t.Fatalf("no exit after SIGTERM; logs:\n%s", logs)
	}
	ok := 0
	for _, c := range codes {
		require.NotEqual(t, -1, c, "every request in flight gets an answer")
		if c == 200 {
			ok++
		}
	}
	require.Positive(t, ok, "queued requests are served during the drain: %v", codes)
	require.Contains(t, logs.String(), "stopped")
}

const resnetHead = `{"inputs":[{"name":"input","shape":[1,3,224,224],"datatype":"FP32","parameters":{"binary_data_size":602112}}]}`

var resnetHeadLen = len(resnetHead)

func resnetJSON() []byte {
	// Binary payload: 3×224×224 FP32 zeros.
	head := resnetHead
	return append([]byte(head), make([]byte, 602112)...)
}

func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }

// TestScrapeDuringStalledExecutor stops an executor (SIGSTOP) and scrapes
// /metrics and the status: both answer from the state executors pushed,
// without waiting on the stalled one (asking it, as scrapes once did, took
// at least the 500 ms timeout per executor). The first request sent to it
// is refused as unanswered, its gpu-let is marked stalled, and the next
// requests go to mlp's other gpu-lets, all answered; once it runs again (or
// its health checks have restarted it) the gpu-let is ready again.
func TestScrapeDuringStalledExecutor(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds and runs the binary")
	}
	base, logs, _ := emulatedDaemon(t, []string{"mlp"})
	// On a loaded machine the first answers may be refused (503, deadline
	// cannot be met); one batch must run before the executor is stopped.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		r := do(t, "POST", base+"/v2/models/mlp/infer", mlpJSON(1), nil)
		if r.code == 200 {
			break
		}
		require.False(t, time.Now().After(deadline), "no inference answered; last: %d %s", r.code, r.body)
	}
	var pid int
	require.Eventually(t, func() bool {
		for _, g := range getStatus(t, base).Gpulets {
			if g.State == "ready" && g.PID != 0 && g.BusyRatio > 0 {
				pid = g.PID
				return true
			}
		}
		return false
	}, 60*time.Second, 100*time.Millisecond, "a gpu-let has run a batch; logs:\n%s", logs)
	var stopped string
	for _, g := range getStatus(t, base).Gpulets {
		if g.PID == pid {
			stopped = g.ID
		}
	}
	require.NoError(t, syscall.Kill(pid, syscall.SIGSTOP))
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGCONT) })
	for _, path := range []string{"/metrics", "/api/v1/status"} {
		start := time.Now()
		r := do(t, "GET", base+path, nil, nil)
		took := time.Since(start)
		require.Equal(t, 200, r.code, path)
		// Asking the executor, as scrapes once did, took at least its 500 ms
		// timeout: anything under it did not wait.
		require.Less(t, took, 500*time.Millisecond, "%s waited on the stalled executor", path)
		if path == "/metrics" {
			require.Contains(t, string(r.body), "gpuletd_gpulet_busy_ratio{")
		}
	}

	// The router spreads requests over mlp's gpu-lets (an idle node gives
	// it several): one soon goes to the stopped one and is refused.
	silent := "mlp: no answer by the deadline: its executor on " + stopped + " has sent nothing since the request went to it"
	for i := 0; ; i++ {
		r := do(t, "POST", base+"/v2/models/mlp/infer", mlpJSON(1), nil)
		if r.code == 503 && strings.Contains(string(r.body), silent) {
			break
		}
		require.Less(t, i, 20, "no request found %s silent; last: %d %s", stopped, r.code, r.body)
	}
	marked := false
	for _, g := range getStatus(t, base).Gpulets {
		if g.ID == stopped {
			marked = g.State == "stalled" && g.Stalled != ""
		}
	}
	require.True(t, marked, "the status says %s is stalled", stopped)
	// None goes to the stopped one now (there it would wait for its
	// deadline and grace, then be refused as above); on a loaded machine
	// the others may refuse some, but they answer.
	answered := 0
	for range 10 {
		r := do(t, "POST", base+"/v2/models/mlp/infer", mlpJSON(1), nil)
		require.NotContains(t, string(r.body), stopped, "a request went to the stalled gpu-let")
		if r.code == 200 {
			answered++
		}
	}
	require.Positive(t, answered, "mlp's other gpu-lets answer")
	r := do(t, "GET", base+"/api/v1/events?kind=executor_stall", nil, nil)
	require.Equal(t, 200, r.code)
	require.Contains(t, string(r.body), "executor on "+stopped+" sent nothing since a mlp request went to it")

	require.NoError(t, syscall.Kill(pid, syscall.SIGCONT))
	require.Eventually(t, func() bool {
		for _, g := range getStatus(t, base).Gpulets {
			if g.ID == stopped {
				return g.State == "ready" && g.Stalled == ""
			}
		}
		return true // a re-plan retired it
	}, 30*time.Second, 100*time.Millisecond, "%s serves again: heard, or restarted", stopped)
}

// TestASecondDaemonOnTheSameDirectoriesIsRefused starts a daemon, then a
// second `gpuletd serve` with the same state and runtime directories (on
// another port): the second exits at once naming the first, and leaves the
// first's executor sockets and store as they were.
func TestASecondDaemonOnTheSameDirectoriesIsRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds and runs the binary")
	}
	env, addr, _, pid := readyMLPDaemon(t)
	base := "http://" + addr
	runtime := envValue(env, "GPULETD_RUNTIME_DIR")
	before := treeOf(t, runtime)
	require.Contains(t, before, "executors/x1.sock")

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	second := exec.CommandContext(ctx, testbin.Gpuletd(t), "serve")
	second.Env = append(env, "GPULETD_LISTEN="+freeAddr(t))
	var errb bytes.Buffer
	second.Stderr = &errb
	err := second.Run()
	stderr := errb.String()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, "the second daemon exits: %s", stderr)
	require.Equal(t, 1, ee.ExitCode(), stderr)
	require.Contains(t, stderr, "another gpuletd uses this directory (pid "+strconv.Itoa(pid)+")")
	require.Contains(t, stderr, "give this daemon a state_dir and a runtime_dir of its own")
	require.Equal(t, before, treeOf(t, runtime), "the second daemon touched nothing of the first's")
	r := do(t, "POST", base+"/v2/models/mlp/infer", mlpJSON(2), nil)
	require.Equal(t, 200, r.code, string(r.body))
	require.Zero(t, getStatus(t, base).Restarts)
}

// treeOf lists the paths under dir, relative to it.
func treeOf(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	require.NoError(t, filepath.WalkDir(dir, func(path string, _ os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		out = append(out, rel)
		return err
	}))
	return out
}
