package control

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/gpulet"
)

// recorder is a Node that records what Reorganize asks of it, in order
// (concurrent calls are sorted within their step).
type recorder struct {
	mu       sync.Mutex
	next     int
	log      []string
	noRoom   map[int]bool // sizes whose first start fails while old gpu-lets run
	failLoad map[string]bool
	// tight names models that do not load on a new gpu-let until
	// roomAfter (at least one) old gpu-lets have stopped (memory they
	// hold), broken models that never load.
	tight, broken map[string]bool
	// slow holds the start of a gpu-let of the size (once it has room)
	// until the channel closes.
	slow map[int]chan struct{}
	// stops counts the gpu-lets stopped; a gpu-let without room starts
	// once roomAfter (at least one) have been.
	stops, roomAfter int
}

func (r *recorder) add(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.log = append(r.log, s)
}

func names(l gpulet.GPULet) string {
	var n []string
	for _, p := range l.Models {
		n = append(n, p.Name)
	}
	return strings.Join(n, ",")
}

func (r *recorder) Start(_ context.Context, gpu *gpulet.GPUPlan, let gpulet.GPULet) (int, error) {
	r.mu.Lock()
	if r.noRoom[let.Size] && r.stops < max(r.roomAfter, 1) {
		r.mu.Unlock()
		r.add(fmt.Sprintf("start %s %d[%s] failed", gpu.ID, let.Size, names(let)))
		return 0, errors.New("no room")
	}
	r.next++
	h := 100 + r.next
	missing := map[string]error{}
	for _, p := range let.Models {
		if r.broken[p.Name] || (r.tight[p.Name] && r.stops < max(r.roomAfter, 1)) {
			missing[p.Name] = errors.New("out of memory")
		}
	}
	wait := r.slow[let.Size]
	r.mu.Unlock()
	if wait != nil {
		<-wait
	}
	r.add(fmt.Sprintf("start %s %d[%s]", gpu.ID, let.Size, names(let)))
	if len(missing) > 0 {
		return h, &ModelsNotLoaded{Errs: missing}
	}
	return h, nil
}

func (r *recorder) Load(_ context.Context, h int, _ *gpulet.GPUPlan, _ gpulet.GPULet, p gpulet.Placement) error {
	r.mu.Lock()
	noMemory := r.broken[p.Name] || (r.tight[p.Name] && r.stops < max(r.roomAfter, 1))
	r.mu.Unlock()
	if r.failLoad[p.Name] || noMemory {
		r.add(fmt.Sprintf("load %d %s failed", h, p.Name))
		if noMemory {
			return errors.New("out of memory")
		}
		return errors.New("bad model")
	}
	r.add(fmt.Sprintf("load %d %s", h, p.Name))
	return nil
}

func (r *recorder) Retune(_ context.Context, h int, _ *gpulet.GPUPlan, _ gpulet.GPULet) {
	r.add(fmt.Sprintf("retune %d", h))
}

func (r *recorder) Route(serving []Serving[int]) {
	var s []string
	for _, x := range serving {
		s = append(s, fmt.Sprintf("%d[%s]", x.H, names(x.Let)))
	}
	slices.Sort(s)
	r.add("route " + strings.Join(s, " "))
}

func (r *recorder) Stop(_ context.Context, h int) {
	r.mu.Lock()
	r.stops++
	r.mu.Unlock()
	r.add(fmt.Sprintf("stop %d", h))
}

func (r *recorder) Unload(_ context.Context, h int, model string) {
	r.add(fmt.Sprintf("unload %d %s", h, model))
}

func place(name string, batch int, rate float64) gpulet.Placement {
	return gpulet.Placement{Name: name, Batch: batch, Rate: rate}
}

func TestReorganize(t *testing.T) {
	running := []Serving[int]{
		{GPU: "g0", Let: gpulet.GPULet{Size: 50, Models: []gpulet.Placement{place("a", 4, 10), place("b", 2, 5)}}, H: 1},
		{GPU: "g0", Let: gpulet.GPULet{Size: 50, Models: []gpulet.Placement{place("c", 8, 40)}}, H: 2},
		{GPU: "g1", Let: gpulet.GPULet{Size: 100, Models: []gpulet.Placement{place("d", 8, 40)}}, H: 3},
	}
	plan := &gpulet.Plan{GPUs: []gpulet.GPUPlan{
		{ID: "g0", GPULets: []gpulet.GPULet{
			{Size: 50, Models: []gpulet.Placement{place("a", 4, 12), place("e", 2, 5)}}, // keeps 1: loads e, unloads b, retunes a
			{Size: 30, Models: []gpulet.Placement{place("c", 4, 20)}},                   // starts
			{Size: 20, Models: []gpulet.Placement{place("c", 2, 20)}},                   // starts
		}},
		{ID: "g1", GPULets: []gpulet.GPULet{{Size: 100, Models: []gpulet.Placement{place("d", 8, 40)}}}}, // keeps 3 as it is
	}}
	tests := []struct {
		name     string
		noRoom   map[int]bool
		failLoad map[string]bool
		want     []string
		started  int
		deferred int
		failed   int
	}{
		{name: "start, load, switch, stop, unload", started: 2, want: []string{
			"start g0 20[c]", "start g0 30[c]", "retune 1", "load 1 e",
			"route 101[c] 102[c] 1[a,e] 3[d]", "stop 2", "unload 1 b",
		}},
		{name: "a gpu-let without room starts after the old ones drained", noRoom: map[int]bool{30: true}, started: 1, deferred: 1, want: []string{
			"start g0 20[c]", "start g0 30[c] failed", "retune 1", "load 1 e",
			"route 101[c] 1[a,e] 3[d]", "stop 2", "unload 1 b", "start g0 30[c]",
			"route 101[c] 102[c] 1[a,e] 3[d]",
		}},
		{name: "a model that does not load is not routed, tried again once the old drained", failLoad: map[string]bool{"e": true}, started: 2, failed: 1, want: []string{
			"start g0 20[c]", "start g0 30[c]", "retune 1", "load 1 e failed",
			"route 101[c] 102[c] 1[a] 3[d]", "stop 2", "unload 1 b", "load 1 e failed",
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := &recorder{noRoom: tc.noRoom, failLoad: tc.failLoad}
			out, err := Reorganize(context.Background(), r, running, plan)
			require.Equal(t, tc.failed > 0, err != nil, "error: %v", err)
			// Concurrent starts come in either order and take handles in
			// that order: sort the first two lines and name handles by
			// what they run.
			require.Len(t, r.log, len(tc.want))
			slices.Sort(r.log[:2])
			require.Equal(t, tc.want, normalize(r.log))
			require.Equal(t, tc.started, out.Started)
			require.Equal(t, tc.deferred, out.Deferred)
			require.Len(t, out.Failed, tc.failed)
			require.Equal(t, 1, out.Stopped)
			require.False(t, out.Ready())
			require.Equal(t, 12.0, plan.GPUs[0].GPULets[0].Models[0].Rate, "the plan is not changed")
			require.Len(t, plan.GPUs[0].GPULets[0].Models, 2, "the plan is not changed")
		})
	}
}

// TestReorganizeRoutesEachDeferredGPULetAsItStarts: two gpu-lets that
// start only after the old ones drained; the one that starts first serves
// at once, not when the other (a model warming up for seconds) has
// started too.
func TestReorganizeRoutesEachDeferredGPULetAsItStarts(t *testing.T) {
	running := []Serving[int]{{GPU: "g0", Let: gpulet.GPULet{Size: 100, Models: []gpulet.Placement{place("a", 4, 10), place("c", 2, 5)}}, H: 1}}
	plan := &gpulet.Plan{GPUs: []gpulet.GPUPlan{{ID: "g0", GPULets: []gpulet.GPULet{
		{Size: 50, Models: []gpulet.Placement{place("a", 4, 20)}},
		{Size: 40, Models: []gpulet.Placement{place("c", 2, 10)}},
	}}}}
	slow := make(chan struct{})
	r := &recorder{noRoom: map[int]bool{50: true, 40: true}, slow: map[int]chan struct{}{40: slow}}
	done := make(chan Outcome[int], 1)
	go func() {
		out, _ := Reorganize(context.Background(), r, running, plan)
		done <- out
	}()
	// Handles are taken in start order, which concurrency shuffles: the
	// routes are compared by the models they serve.
	routes := func() []string {
		r.mu.Lock()
		defer r.mu.Unlock()
		var out []string
		for _, l := range r.log {
			if h, ok := strings.CutPrefix(l, "route "); ok {
				out = append(out, strings.Join(slices.Sorted(slices.Values(modelsOf(h))), " "))
			}
		}
		return out
	}
	require.Eventually(t, func() bool { return slices.Contains(routes(), "a") }, 5*time.Second, time.Millisecond,
		"the 50%% gpu-let serves while the 40%% one still starts: %v", r)
	close(slow)
	out := <-done
	require.Equal(t, 2, out.Deferred)
	require.Equal(t, []string{"", "a", "a c"}, routes(), "no route before the old gpu-let drained, then each as it starts")
	require.Len(t, out.Serving, 2)
}

// modelsOf are the models a route line's gpu-lets serve ("101[a,b] 3[c]").
func modelsOf(route string) []string {
	var out []string
	for _, f := range strings.Fields(route) {
		_, ms, _ := strings.Cut(strings.TrimSuffix(f, "]"), "[")
		out = append(out, strings.Split(ms, ",")...)
	}
	return out
}

// normalize renames the new handles (101, 102, … in start order, which
// concurrency shuffles) by the size they were started for.
func normalize(log []string) []string {
	out := slices.Clone(log)
	byStart := map[string]string{}
	n := 0
	for _, l := range log {
		if strings.HasPrefix(l, "start ") && !strings.HasSuffix(l, "failed") {
			n++
			byStart[fmt.Sprint(100+n)] = l
		}
	}
	// Handles are named 101 for the 20% and 102 for the 30% gpu-let.
	rename := map[string]string{}
	for h, l := range byStart {
		if strings.Contains(l, " 20[") {
			rename[h] = "101"
		} else {
			rename[h] = "102"
		}
	}
	for i, l := range out {
		if !strings.HasPrefix(l, "route ") {
			continue
		}
		parts := strings.Fields(l)[1:]
		for j, p := range parts {
			h, rest, _ := strings.Cut(p, "[")
			if nh, ok := rename[h]; ok {
				parts[j] = nh + "[" + rest
			}
		}
		slices.Sort(parts)
		out[i] = "route " + strings.Join(parts, " ")
	}
	return out
}

// A new gpu-let whose model does not load serves its other models; when old
// gpu-lets were to stop, the model is tried again once they have (memory
// they held), and otherwise reported. An old gpu-let that serves the model
// meanwhile stays routed while the others drain and it is tried again, and
// drains last: the model is not unrouted for those drains and its load
// (seconds on a GPU) when the others' memory suffices.
func TestReorganizeStartsWithoutAModelThatDoesNotLoad(t *testing.T) {
	one := []Serving[int]{{GPU: "g0", Let: gpulet.GPULet{Size: 50, Models: []gpulet.Placement{place("a", 4, 10)}}, H: 1}}
	two := []Serving[int]{
		{GPU: "g0", Let: gpulet.GPULet{Size: 50, Models: []gpulet.Placement{place("a", 4, 10)}}, H: 1},
		{GPU: "g0", Let: gpulet.GPULet{Size: 50, Models: []gpulet.Placement{place("b", 2, 5)}}, H: 2},
	}
	both := []Serving[int]{{GPU: "g0", Let: gpulet.GPULet{Size: 50, Models: []gpulet.Placement{place("a", 4, 10), place("b", 2, 5)}}, H: 1}}
	resize := &gpulet.Plan{GPUs: []gpulet.GPUPlan{{ID: "g0", GPULets: []gpulet.GPULet{
		{Size: 60, Models: []gpulet.Placement{place("a", 4, 10), place("b", 2, 5)}}}}}}
	fresh := &gpulet.Plan{GPUs: []gpulet.GPUPlan{
		{ID: "g0", GPULets: []gpulet.GPULet{{Size: 50, Models: []gpulet.Placement{place("a", 4, 10)}}}},
		{ID: "g1", GPULets: []gpulet.GPULet{{Size: 100, Models: []gpulet.Placement{place("b", 2, 5), place("c", 2, 5)}}}}}}
	tests := []struct {
		name          string
		running       []Serving[int]
		plan          *gpulet.Plan
		tight, broken map[string]bool
		roomAfter     int
		want          []string
		failed        []string
		loaded        int
		bridged       int
	}{
		{name: "loads once the old gpu-let has stopped", running: one, plan: resize, tight: map[string]bool{"b": true}, loaded: 1, want: []string{
			"start g0 60[a,b]", "route 101[a]", "stop 1", "load 101 b", "route 101[a,b]",
		}},
		{name: "never loads: reported, its neighbour serves", running: one, plan: resize, broken: map[string]bool{"b": true}, failed: []string{"b"}, want: []string{
			"start g0 60[a,b]", "route 101[a]", "stop 1", "load 101 b failed",
		}},
		{name: "nothing to stop: reported at once", running: one, plan: fresh, broken: map[string]bool{"c": true}, failed: []string{"c"}, want: []string{
			"start g1 100[b,c]", "route 101[b] 1[a]",
		}},
		{name: "its old gpu-let serves it while the other drains", running: two, plan: resize, tight: map[string]bool{"b": true}, loaded: 1, bridged: 1, want: []string{
			"start g0 60[a,b]", "route 101[a] 2[b]", "stop 1", "load 101 b", "route 101[a,b]", "stop 2",
		}},
		{name: "its old gpu-let's memory is needed too", running: two, plan: resize, tight: map[string]bool{"b": true}, roomAfter: 2, loaded: 1, bridged: 1, want: []string{
			"start g0 60[a,b]", "route 101[a] 2[b]", "stop 1", "load 101 b failed", "route 101[a]", "stop 2",
			"load 101 b", "route 101[a,b]",
		}},
		{name: "its old gpu-let is the only one: it drains first", running: both, plan: resize, tight: map[string]bool{"b": true}, loaded: 1, want: []string{
			"start g0 60[a,b]", "route 101[a]", "stop 1", "load 101 b", "route 101[a,b]",
		}},
		{name: "never loads beside a bridge: reported once both drained", running: two, plan: resize, broken: map[string]bool{"b": true}, failed: []string{"b"}, bridged: 1, want: []string{
			"start g0 60[a,b]", "route 101[a] 2[b]", "stop 1", "load 101 b failed", "route 101[a]", "stop 2", "load 101 b failed",
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := &recorder{tight: tc.tight, broken: tc.broken, roomAfter: tc.roomAfter}
			out, err := Reorganize(context.Background(), r, tc.running, tc.plan)
			var failed []string
			for _, f := range out.Failed {
				failed = append(failed, f.Model)
				require.ErrorContains(t, f.Err, "out of memory")
			}
			require.Equal(t, tc.failed, failed)
			require.Equal(t, len(tc.failed) > 0, err != nil, "error: %v", err)
			require.Equal(t, tc.want, r.log)
			require.Equal(t, 1, out.Started)
			require.Equal(t, tc.loaded, out.Loaded)
			require.Equal(t, tc.loaded, out.Reloaded, "every load here follows a drain")
			require.Equal(t, tc.bridged, out.Bridged)
			stops := slices.DeleteFunc(slices.Clone(tc.want), func(l string) bool { return !strings.HasPrefix(l, "stop ") })
			require.Len(t, stops, out.Stopped)
			require.Len(t, tc.plan.GPUs[len(tc.plan.GPUs)-1].GPULets[0].Models, 2, "the plan is not changed")
		})
	}
}

// A model moved onto a kept gpu-let that does not load there while old
// gpu-lets run (memory they hold) is loaded again once they have drained,
// as on a new gpu-let; its old gpu-let serves it meanwhile and drains last.
// Before, the load failed for good: the model was unservable until some
// later re-plan moved it again.
func TestReorganizeLoadsOnAKeptGPULetOnceTheOldDrained(t *testing.T) {
	running := []Serving[int]{
		{GPU: "g0", Let: gpulet.GPULet{Size: 50, Models: []gpulet.Placement{place("a", 4, 10)}}, H: 1},
		{GPU: "g0", Let: gpulet.GPULet{Size: 25, Models: []gpulet.Placement{place("b", 2, 5)}}, H: 2},
		{GPU: "g0", Let: gpulet.GPULet{Size: 25, Models: []gpulet.Placement{place("c", 2, 5)}}, H: 3},
	}
	plan := &gpulet.Plan{GPUs: []gpulet.GPUPlan{{ID: "g0", GPULets: []gpulet.GPULet{
		{Size: 50, Models: []gpulet.Placement{place("a", 4, 10), place("b", 2, 5)}}, // keeps 1, loads b
		{Size: 50, Models: []gpulet.Placement{place("c", 2, 5)}},                    // resizes 3
	}}}}
	tests := []struct {
		name      string
		roomAfter int
		broken    bool
		want      []string
		loaded    int
	}{
		{name: "the other old gpu-let's memory suffices", roomAfter: 1, loaded: 1, want: []string{
			"start g0 50[c]", "load 1 b failed", "route 101[c] 1[a] 2[b]", "stop 3",
			"load 1 b", "route 101[c] 1[a,b]", "stop 2",
		}},
		{name: "its old gpu-let's memory is needed too", roomAfter: 2, loaded: 1, want: []string{
			"start g0 50[c]", "load 1 b failed", "route 101[c] 1[a] 2[b]", "stop 3",
			"load 1 b failed", "route 101[c] 1[a]", "stop 2", "load 1 b", "route 101[c] 1[a,b]",
		}},
		{name: "it never loads", broken: true, want: []string{
			"start g0 50[c]", "load 1 b failed", "route 101[c] 1[a] 2[b]", "stop 3",
			"load 1 b failed", "route 101[c] 1[a]", "stop 2", "load 1 b failed",
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := &recorder{tight: map[string]bool{"b": !tc.broken}, broken: map[string]bool{"b": tc.broken}, roomAfter: tc.roomAfter}
			out, err := Reorganize(context.Background(), r, running, plan)
			require.Equal(t, tc.want, r.log)
			require.Equal(t, tc.loaded, out.Loaded)
			require.Equal(t, tc.loaded, out.Reloaded)
			require.Equal(t, 1, out.Bridged)
			require.Equal(t, 2, out.Stopped)
			if tc.broken {
				require.ErrorContains(t, err, "out of memory")
				require.Len(t, out.Failed, 1)
				require.Equal(t, "b", out.Failed[0].Model)
				return
			}
			require.NoError(t, err)
			require.Empty(t, out.Failed)
		})
	}
}

func TestReorganizeNothingChanges(t *testing.T) {
	running := []Serving[int]{{GPU: "g", Let: gpulet.GPULet{Size: 100, Models: []gpulet.Placement{place("a", 4, 10)}}, H: 7}}
	plan := &gpulet.Plan{GPUs: []gpulet.GPUPlan{{ID: "g", GPULets: []gpulet.GPULet{{Size: 100, Models: []gpulet.Placement{place("a", 4, 10)}}}}}}
	r := &recorder{}
	out, err := Reorganize(context.Background(), r, running, plan)
	require.NoError(t, err)
	require.True(t, out.Ready())
	require.True(t, out.Diff.Unchanged())
	require.Equal(t, []string{"route 7[a]"}, r.log)
}

// serial is a recorder that asks for its calls one at a time.
type serial struct{ *recorder }

func (serial) Serial() bool { return true }

func TestReorganizeSerialKeepsPlanOrder(t *testing.T) {
	running := []Serving[int]{
		{GPU: "g", Let: gpulet.GPULet{Size: 100, Models: []gpulet.Placement{place("a", 4, 10)}}, H: 1},
		{GPU: "h", Let: gpulet.GPULet{Size: 100, Models: []gpulet.Placement{place("b", 4, 10)}}, H: 2},
	}
	plan := &gpulet.Plan{GPUs: []gpulet.GPUPlan{{ID: "g", GPULets: []gpulet.GPULet{
		{Size: 60, Models: []gpulet.Placement{place("a", 4, 10)}},
		{Size: 40, Models: []gpulet.Placement{place("b", 4, 10)}},
	}}}}
	for range 20 {
		r := serial{&recorder{}}
		_, err := Reorganize(context.Background(), r, running, plan)
		require.NoError(t, err)
		require.Equal(t, []string{"start g 60[a]", "start g 40[b]", "route 101[a] 102[b]", "stop 1", "stop 2"}, r.log)
	}
}

// A model whose new gpu-let lacks room keeps its old gpu-let while the
// other old gpu-lets drain and the new one starts: it is never unrouted
// when draining those others makes the room. Before, every old gpu-let
// drained first, and the model had no route for the new gpu-let's start
// (its load and warm-up: seconds on a GPU). When the room takes its old
// gpu-let too, that one drains next and the start is tried again; a node
// that can start it over the bridge (Overlapper) does so then, before the
// bridge drains, and the model is never unrouted.
func TestReorganizeBridgesAModelWhoseGPULetLacksRoom(t *testing.T) {
	running := []Serving[int]{
		{GPU: "g0", Let: gpulet.GPULet{Size: 50, Models: []gpulet.Placement{place("a", 4, 10)}}, H: 1},
		{GPU: "g0", Let: gpulet.GPULet{Size: 50, Models: []gpulet.Placement{place("b", 2, 5)}}, H: 2},
	}
	plan := &gpulet.Plan{GPUs: []gpulet.GPUPlan{{ID: "g0", GPULets: []gpulet.GPULet{
		{Size: 80, Models: []gpulet.Placement{place("a", 8, 20)}},
		{Size: 20, Models: []gpulet.Placement{place("b", 2, 5)}},
	}}}}
	suffices := []string{
		"start g0 20[b]", "start g0 80[a] failed",
		"route 101[b] 1[a]", "stop 2", "start g0 80[a]",
		"route 101[b] 102[a] 1[a]", "route 101[b] 102[a]", "stop 1",
	}
	tests := []struct {
		name       string
		roomAfter  int
		over       bool // the node is an Overlapper
		want       []string
		overlapped int
	}{
		{name: "the others' room suffices", roomAfter: 1, want: suffices},
		{name: "the others' room suffices, an Overlapper", roomAfter: 1, over: true, want: suffices},
		{name: "the bridge's room is needed too", roomAfter: 2, want: []string{
			"start g0 20[b]", "start g0 80[a] failed",
			"route 101[b] 1[a]", "stop 2", "start g0 80[a] failed",
			"route 101[b]", "stop 1", "start g0 80[a]",
			"route 101[b] 102[a]",
		}},
		{name: "the bridge's room is needed too, an Overlapper", roomAfter: 2, over: true, want: []string{
			"start g0 20[b]", "start g0 80[a] failed",
			"route 101[b] 1[a]", "stop 2", "start g0 80[a] failed", "start g0 80[a] over [1]",
			"route 101[b] 102[a]", "stop 1",
		}, overlapped: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := &recorder{noRoom: map[int]bool{80: true}, roomAfter: tc.roomAfter}
			var node Node[int] = r
			if tc.over {
				node = overlapper{recorder: r}
			}
			out, err := Reorganize(context.Background(), node, running, plan)
			require.NoError(t, err)
			slices.Sort(r.log[:2])
			require.Equal(t, tc.want, normalize(r.log))
			require.Equal(t, 1+tc.overlapped, out.Started)
			require.Equal(t, 1-tc.overlapped, out.Deferred)
			require.Equal(t, tc.overlapped, out.Overlapped)
			require.Equal(t, 2, out.Stopped)
			require.Equal(t, 1, out.Bridged)
			require.Empty(t, out.Failed)
			require.Len(t, out.Serving, 2)
		})
	}
}

// overlapper is a recorder that can start a gpu-let over old ones
// (Overlapper), unless it cannot (a device whose room is not shared).
type overlapper struct {
	*recorder
	cannot bool
}

func (o overlapper) StartOver(_ context.Context, gpu *gpulet.GPUPlan, let gpulet.GPULet, over []int) (int, error) {
	if o.cannot {
		o.add(fmt.Sprintf("start %s %d[%s] over %v failed", gpu.ID, let.Size, names(let), over))
		return 0, errors.New("not on this device")
	}
	o.mu.Lock()
	o.next++
	h := 100 + o.next
	o.mu.Unlock()
	o.add(fmt.Sprintf("start %s %d[%s] over %v", gpu.ID, let.Size, names(let), over))
	return h, nil
}

// TestReorganizeStartsOverAGPULetThatHoldsTheRoom: a gpu-let resized where
// the new size does not fit beside the old (the CPU's cores) is the only
// one serving its models. Draining it first left them unrouted until the
// new one had started (a CPU node answered "no gpu-let is serving it"); a
// node that can start the new one over the old does, and routes it before
// the old drains. One that cannot, or a node without StartOver, drains
// first as before.
func TestReorganizeStartsOverAGPULetThatHoldsTheRoom(t *testing.T) {
	both := []gpulet.Placement{place("a", 4, 10), place("b", 2, 5)}
	resize := struct {
		running []Serving[int]
		plan    *gpulet.Plan
	}{
		[]Serving[int]{{GPU: "g0", Let: gpulet.GPULet{Size: 100, Models: both}, H: 1}},
		&gpulet.Plan{GPUs: []gpulet.GPUPlan{{ID: "g0", GPULets: []gpulet.GPULet{{Size: 50, Models: both}}}}},
	}
	drainFirst := []string{
		"start g0 50[a,b] failed", "route ", "stop 1", "start g0 50[a,b]", "route 101[a,b]",
	}
	tests := []struct {
		name                 string
		node                 func(r *recorder) Node[int]
		want                 []string
		overlapped, deferred int
	}{
		{"started over the old", func(r *recorder) Node[int] { return overlapper{recorder: r} }, []string{
			"start g0 50[a,b] failed", "start g0 50[a,b] over [1]", "route 101[a,b]", "stop 1",
		}, 1, 0},
		{"a device that cannot", func(r *recorder) Node[int] { return overlapper{recorder: r, cannot: true} },
			append([]string{"start g0 50[a,b] failed", "start g0 50[a,b] over [1] failed"}, drainFirst[1:]...), 0, 1},
		{"a node without StartOver", func(r *recorder) Node[int] { return r }, drainFirst, 0, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := &recorder{noRoom: map[int]bool{50: true}}
			out, err := Reorganize(context.Background(), tc.node(r), resize.running, resize.plan)
			require.NoError(t, err)
			require.Equal(t, tc.want, r.log)
			require.Equal(t, 1, out.Started+out.Deferred)
			require.Equal(t, tc.overlapped, out.Overlapped)
			require.Equal(t, tc.deferred, out.Deferred)
			require.Equal(t, 1, out.Stopped)
			require.Empty(t, out.Failed)
			require.Len(t, out.Serving, 1)
		})
	}
}

func TestOutcomeChanged(t *testing.T) {
	let := gpulet.GPULet{Size: 100, Models: []gpulet.Placement{place("a", 4, 10), place("b", 2, 5)}}
	less := gpulet.GPULet{Size: 100, Models: []gpulet.Placement{place("a", 4, 10)}}
	one := func(l gpulet.GPULet) *gpulet.Plan {
		return &gpulet.Plan{GPUs: []gpulet.GPUPlan{{ID: "g", GPULets: []gpulet.GPULet{l}}}}
	}
	for _, tc := range []struct {
		name string
		out  Outcome[int]
		want bool
	}{
		{"nothing", Outcome[int]{Diff: gpulet.Diff(one(let), one(let))}, false},
		{"a start", Outcome[int]{Started: 1}, true},
		{"a deferred start", Outcome[int]{Deferred: 1}, true},
		{"a stop", Outcome[int]{Stopped: 1}, true},
		{"a load", Outcome[int]{Loaded: 1}, true},
		{"an unload", Outcome[int]{Diff: gpulet.Diff(one(let), one(less))}, true},
	} {
		require.Equal(t, tc.want, tc.out.Changed(), tc.name)
	}
}
