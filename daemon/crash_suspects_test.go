package daemon

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/daemon/config"
	"github.com/gpulet/gpuletd/daemon/repository"
	"github.com/gpulet/gpuletd/executor"
	"github.com/gpulet/gpuletd/executor/tensor"
	"github.com/gpulet/gpuletd/mps"
)

// digestOf is the digest of one FP32 input x of values vs.
func digestOf(t *testing.T, vs ...float32) inputsDigest {
	t.Helper()
	x, err := tensor.FromFloat32s("x", []int64{1, int64(len(vs))}, vs)
	require.NoError(t, err)
	return digestInputs([]tensor.Tensor{x})
}

// lostOf is a request of model m, file f1, with inputs d, as the request
// path tells the suspects of one that failed.
func lostOf(d inputsDigest) lostRequest { return lostRequest{model: "m", sha: "f1", digest: d} }

// A request the executor ran when it crashed is a suspect, whichever of
// its failure and the executor's end is heard first; one that crashes an
// executor again is quarantined, said once, and refused until its time
// is up. Requests that were only queued, and executors that did not
// crash, make no suspects.
func TestARequestThatCrashesTwoExecutorsIsQuarantined(t *testing.T) {
	t0 := time.Unix(1_000_000, 0)
	poison, other, queued := digestOf(t, 1), digestOf(t, 2), digestOf(t, 3)
	type said struct {
		model string
		d     inputsDigest
		until time.Time
	}
	var told []said
	var c crashSuspects
	c.quarantined = func(model string, d inputsDigest, until time.Time) { told = append(told, said{model, d, until}) }
	require.False(t, c.watching("m"))

	// An executor killed for its health with the request running: not
	// the request's fault.
	c.lost(executorGen{"g1", 1}, 5, lostOf(poison), t0, time.Time{})
	c.ended(executorGen{"g1", 1}, endStopped, []uint64{5}, t0)
	require.False(t, c.watching("m"))

	// The first crash: its failures heard first, then its end.
	e := executorGen{"g1", 2}
	c.lost(e, 7, lostOf(poison), t0, time.Time{})
	c.lost(e, 8, lostOf(other), t0, time.Time{})
	c.lost(e, 9, lostOf(queued), t0, time.Time{})
	require.False(t, c.watching("m"), "nothing until the end is known")
	c.ended(e, endCrashed, []uint64{7, 8}, t0)
	require.True(t, c.watching("m"))
	require.False(t, c.watching("n"), "another model's requests are not digested")
	for d, want := range map[inputsDigest]standing{poison: standingSuspect, other: standingSuspect, queued: standingClear} {
		st, _ := c.standingOf("m", "f1", d, t0.Add(time.Second))
		require.Equal(t, want, st)
	}
	st, _ := c.standingOf("n", "f1", poison, t0.Add(time.Second))
	require.Equal(t, standingClear, st, "another model's request")
	s, q, _ := c.counts("m", t0.Add(time.Second))
	require.Equal(t, [2]int{2, 0}, [2]int{s, q})

	// other runs alone and is answered: a suspect no more.
	c.answered("m", other)
	st, _ = c.standingOf("m", "f1", other, t0.Add(2*time.Second))
	require.Equal(t, standingClear, st)

	// The second crash, run alone: its end heard first.
	e = executorGen{"g1", 3}
	t1 := t0.Add(5 * time.Second)
	c.ended(e, endCrashed, []uint64{1}, t1)
	require.Empty(t, told)
	c.lost(e, 1, lostOf(poison), t1, time.Time{})
	require.Equal(t, []said{{"m", poison, t1.Add(quarantineFor)}}, told)
	st, until := c.standingOf("m", "f1", poison, t1.Add(time.Minute))
	require.Equal(t, standingQuarantined, st)
	require.Equal(t, t1.Add(quarantineFor), until)
	s, q, _ = c.counts("m", t1)
	require.Equal(t, [2]int{0, 1}, [2]int{s, q})
	ierr := quarantinedAnswer("m", until)
	require.Equal(t, http.StatusBadRequest, ierr.code)
	require.Equal(t, reasonCrashesExecutor, ierr.reason)
	require.False(t, ierr.retryable(), "a retry is refused alike")

	// Its time up, it runs again; nothing is left to watch.
	st, _ = c.standingOf("m", "f1", poison, t1.Add(quarantineFor))
	require.Equal(t, standingClear, st)
	require.False(t, c.watching("m"))
}

// A suspect is forgotten after suspectFor; a model loaded anew (another
// file) or unloaded forgets its requests.
func TestCrashSuspectsAreForgotten(t *testing.T) {
	t0 := time.Unix(1_000_000, 0)
	d := digestOf(t, 1)
	crash := func(c *crashSuspects, gen uint64, sha string, at time.Time) {
		c.lost(executorGen{"g", gen}, 1, lostRequest{model: "m", sha: sha, digest: d}, at, time.Time{})
		c.ended(executorGen{"g", gen}, endCrashed, []uint64{1, 2}, at) // with another request: a suspect
	}
	for _, tt := range []struct {
		name  string
		after func(c *crashSuspects) standing
	}{
		{"a suspect's time up", func(c *crashSuspects) standing {
			st, _ := c.standingOf("m", "f1", d, t0.Add(suspectFor))
			return st
		}},
		{"loaded anew", func(c *crashSuspects) standing {
			st, _ := c.standingOf("m", "f2", d, t0.Add(time.Second))
			return st
		}},
		{"unloaded", func(c *crashSuspects) standing {
			c.retain(func(model string) bool { return model != "m" })
			st, _ := c.standingOf("m", "f1", d, t0.Add(time.Second))
			return st
		}},
		{"a crash of the new file is a first crash", func(c *crashSuspects) standing {
			crash(c, 2, "f2", t0.Add(time.Second))
			st, _ := c.standingOf("m", "f2", d, t0.Add(2*time.Second))
			return st - standingSuspect // suspect, not quarantined
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var c crashSuspects
			crash(&c, 1, "f1", t0)
			require.Equal(t, standingClear, tt.after(&c))
		})
	}
}

// A request's digest is its inputs', whatever order they come in, and
// tells apart other values, shapes, data types and names.
func TestDigestInputs(t *testing.T) {
	x, err := tensor.FromFloat32s("x", []int64{1, 2}, []float32{1, 2})
	require.NoError(t, err)
	y, err := tensor.FromFloat32s("y", []int64{1, 2}, []float32{3, 4})
	require.NoError(t, err)
	base := digestInputs([]tensor.Tensor{x, y})
	require.Equal(t, base, digestInputs([]tensor.Tensor{y, x}))
	other := []tensor.Tensor{
		{Name: "x", DataType: x.DataType, Shape: []int64{2, 1}, Data: x.Data},
		{Name: "x", DataType: tensor.Int32, Shape: x.Shape, Data: x.Data},
		{Name: "z", DataType: x.DataType, Shape: x.Shape, Data: x.Data},
	}
	for _, o := range other {
		require.NotEqual(t, base, digestInputs([]tensor.Tensor{o, y}), "%+v", o)
	}
	x2, err := tensor.FromFloat32s("x", []int64{1, 2}, []float32{1, 5})
	require.NoError(t, err)
	require.NotEqual(t, base, digestInputs([]tensor.Tensor{x2, y}))
}

// An executor that has not ended keeps its newest lostKept unanswered
// requests: a hung run's request, answered at its deadline, is matched
// when the executor gives up on the run and ends, one long gone is not.
func TestUnansweredRequestsAreKeptBounded(t *testing.T) {
	t0 := time.Unix(1_000_000, 0)
	var c crashSuspects
	e := executorGen{"g", 1}
	for i := range uint64(lostKept + 44) {
		c.lost(e, i+1, lostRequest{model: "m", sha: "f", digest: digestOf(t, float32(i))}, t0, time.Time{})
	}
	c.mu.Lock()
	require.Len(t, c.ends[e].lost, lostKept)
	require.Len(t, c.ends[e].order, lostKept)
	c.mu.Unlock()
	c.ended(e, endCrashed, []uint64{1, lostKept + 44}, t0.Add(time.Second))
	st, _ := c.standingOf("m", "f", digestOf(t, float32(lostKept+43)), t0.Add(2*time.Second))
	require.Equal(t, standingSuspect, st, "the newest, which the run held")
	st, _ = c.standingOf("m", "f", digestOf(t, 0), t0.Add(2*time.Second))
	require.Equal(t, standingClear, st, "the first, let go")
}

// The request path's two steps: a model without suspects digests nothing;
// a request that got no answer, run when its executor crashed, comes back
// alone, is a suspect no more once answered, and is refused once it
// crashed a second executor.
func TestCrashStandingAndOutcome(t *testing.T) {
	n := &node{}
	m := &repository.Model{Name: "m", SHA256: "f"}
	x, err := tensor.FromFloat32s("x", []int64{1, 1}, []float32{-666})
	require.NoError(t, err)
	in := []tensor.Tensor{x}
	d, alone, refused := n.crashStanding(m, in)
	require.Nil(t, d, "nothing to digest")
	require.False(t, alone)
	require.Nil(t, refused)

	crashWith := func(gen uint64) {
		e := executorGen{"g", gen}
		n.crashOutcome(e, time.Time{}, m, in, d, alone, &inferError{reason: reasonExecutorFailed, sent: 3})
		n.crashes.ended(e, endCrashed, []uint64{3, 4}, time.Now())
	}
	crashWith(1)
	d, alone, refused = n.crashStanding(m, in)
	require.NotNil(t, d)
	require.True(t, alone, "a suspect runs alone")
	require.Nil(t, refused)
	n.crashOutcome(executorGen{"g", 2}, time.Time{}, m, in, d, alone, nil)
	_, alone, _ = n.crashStanding(m, in)
	require.False(t, alone, "answered: a suspect no more")

	crashWith(2)
	d, alone, _ = n.crashStanding(m, in)
	require.True(t, alone)
	crashWith(3)
	_, _, refused = n.crashStanding(m, in)
	require.NotNil(t, refused)
	require.Equal(t, reasonCrashesExecutor, refused.reason)
	require.Contains(t, refused.msg, "m: refused: this request (the same inputs) crashed or hung the model's executor, or faulted its GPU, in a run of its own")

	// Another file of the model: a first standing again.
	d, alone, refused = n.crashStanding(&repository.Model{Name: "m", SHA256: "f2"}, in)
	require.NotNil(t, d)
	require.False(t, alone)
	require.Nil(t, refused)
}

// A request unanswered past its deadline's grace may be in a run that
// never ends: its twins are refused until its executor ends (then it is a
// suspect, or nothing, as any lost request) or until its hang limit has
// passed; one that a client's own deadline ended, or that an executor
// already ended lost, refuses nothing. A new file or an unload forgets it.
func TestATwinOfAHungRequestIsRefused(t *testing.T) {
	t0 := time.Unix(1_000_000, 0)
	hung, other := digestOf(t, 1), digestOf(t, 2)
	var c crashSuspects
	e := executorGen{"g1", 1}
	until := t0.Add(5 * time.Second)

	c.lost(e, 1, lostOf(other), t0, time.Time{}) // a client's deadline, or overload
	require.False(t, c.watching("m"))
	c.lost(e, 2, lostOf(hung), t0, until)
	require.True(t, c.watching("m"), "the model's requests are digested")
	for _, tc := range []struct {
		d     inputsDigest
		sha   string
		at    time.Duration
		want  standing
		until time.Time
	}{
		{hung, "f1", time.Second, standingTwinHung, until},
		{other, "f1", time.Second, standingClear, time.Time{}},
		{hung, "f2", time.Second, standingClear, time.Time{}}, // loaded anew: forgotten
	} {
		st, u := c.standingOf("m", tc.sha, tc.d, t0.Add(tc.at))
		require.Equal(t, tc.want, st)
		require.Equal(t, tc.until, u)
	}
	require.False(t, c.watching("m"))

	c.lost(e, 2, lostOf(hung), t0, until)
	_, _, hanging := c.counts("m", t0)
	require.Equal(t, 1, hanging)
	st, _ := c.standingOf("m", "f1", hung, until)
	require.Equal(t, standingClear, st, "the executor has given up on it by now")
	require.False(t, c.watching("m"))

	// Its run ends late (its executor's running file names it no more):
	// its twins are refused no more, and the executor no longer hangs.
	going := true
	c.runs = func(ex executorGen, id uint64) bool {
		require.Equal(t, e, ex)
		require.Equal(t, uint64(2), id)
		return going
	}
	c.lost(e, 2, lostOf(hung), t0, until)
	st, _ = c.standingOf("m", "f1", hung, t0.Add(time.Second))
	require.Equal(t, standingTwinHung, st, "still running")
	require.True(t, c.hangs(e, t0.Add(time.Second)))
	_, _, hanging = c.counts("m", t0.Add(time.Second))
	require.Equal(t, 1, hanging)
	going = false
	_, _, hanging = c.counts("m", t0.Add(2*time.Second))
	require.Zero(t, hanging, "its run has ended: the warnings and the metric say none")
	require.False(t, c.hangs(e, t0.Add(2*time.Second)), "its run has ended")
	st, _ = c.standingOf("m", "f1", hung, t0.Add(2*time.Second))
	require.Equal(t, standingClear, st, "its run has ended")
	require.False(t, c.watching("m"))
	c.runs = nil

	// Its executor hangs and ends: the request is a suspect now, and runs
	// alone; no twin is refused any more.
	c.lost(e, 2, lostOf(hung), t0, until)
	c.ended(e, endCrashed, []uint64{2, 9}, t0.Add(time.Second))
	st, _ = c.standingOf("m", "f1", hung, t0.Add(2*time.Second))
	require.Equal(t, standingSuspect, st)
	_, _, hanging = c.counts("m", t0.Add(2*time.Second))
	require.Zero(t, hanging)

	// Its executor stopped otherwise (retired by a plan, killed) with the
	// request still running: a suspect, not proven, unless it ran alone
	// hangProof past its grace; with it not running, nothing.
	for _, tc := range []struct {
		running []uint64
		after   time.Duration
		want    standing
	}{
		{[]uint64{7}, time.Second, standingSuspect},
		{[]uint64{7}, hangProof, standingQuarantined},
		{[]uint64{7, 9}, hangProof, standingSuspect},
		{[]uint64{8}, hangProof, standingClear},
	} {
		var k crashSuspects
		k.lost(e, 7, lostOf(other), t0, t0.Add(time.Minute))
		k.ended(e, endStopped, tc.running, t0.Add(tc.after))
		st, _ := k.standingOf("m", "f1", other, t0.Add(tc.after+time.Second))
		require.Equal(t, tc.want, st, "running %v after %v", tc.running, tc.after)
	}

	// A request lost on an executor that has ended already refuses nothing.
	c.lost(e, 3, lostOf(other), t0.Add(3*time.Second), until)
	st, _ = c.standingOf("m", "f1", other, t0.Add(3*time.Second))
	require.Equal(t, standingClear, st)

	// Unloaded: forgotten.
	e2 := executorGen{"g1", 2}
	c.lost(e2, 1, lostOf(other), t0, until)
	c.retain(func(string) bool { return false })
	require.False(t, c.watching("m"))
	st, _ = c.standingOf("m", "f1", other, t0.Add(time.Second))
	require.Equal(t, standingClear, st)
}

// The request path refuses a twin of a hung request, 503 and retryable,
// and records as hung only a request whose run was under way when its
// wait ended unanswered (runOn: gpuletRun.runs), not one its executor
// had not run (stopped, starved).
func TestCrashOutcomeOfAnUnansweredRequest(t *testing.T) {
	n := &node{}
	m := &repository.Model{Name: "m", SHA256: "f1"}
	x, err := tensor.FromFloat32s("x", []int64{1, 1}, []float32{-777})
	require.NoError(t, err)
	in := []tensor.Tensor{x}
	e := executorGen{"g", 1}
	n.crashOutcome(e, time.Time{}, m, in, nil, false, &inferError{reason: reasonDeadline, sent: 4, unanswered: true}) // its run not under way
	_, _, refused := n.crashStanding(m, in)
	require.Nil(t, refused)
	n.crashOutcome(e, time.Now().Add(time.Minute), m, in, nil, false, &inferError{reason: reasonDeadline, sent: 5, unanswered: true})
	d, alone, refused := n.crashStanding(m, in)
	require.NotNil(t, d)
	require.False(t, alone)
	require.NotNil(t, refused)
	require.Equal(t, reasonTwinHung, refused.reason)
	require.Equal(t, http.StatusServiceUnavailable, refused.code)
	require.True(t, refused.retryable())
	require.Contains(t, refused.msg, "m: refused for now: the same request (the same inputs) got no answer even well past its deadline")
	require.Contains(t, n.crashWarning("m"), "requests with no answer even well past their deadline: 1")
}

// A request that crashed or hung an executor in a run of its own is
// quarantined at once, whichever of its loss and the end is heard first:
// run alone, as a suspect would be, it is proven already.
func TestARequestThatCrashesARunOfItsOwnIsQuarantinedAtOnce(t *testing.T) {
	t0 := time.Unix(1_000_000, 0)
	poison := digestOf(t, 1)
	for _, lossFirst := range []bool{true, false} {
		var c crashSuspects
		var told int
		c.quarantined = func(string, inputsDigest, time.Time) { told++ }
		e := executorGen{"g", 1}
		r := lostRequest{model: "m", sha: "f", digest: poison}
		if lossFirst {
			c.lost(e, 4, r, t0, time.Time{})
		}
		c.ended(e, endCrashed, []uint64{4}, t0)
		if !lossFirst {
			c.lost(e, 4, r, t0, time.Time{})
		}
		st, until := c.standingOf("m", "f", poison, t0.Add(time.Second))
		require.Equal(t, standingQuarantined, st, "loss first: %v", lossFirst)
		require.Equal(t, t0.Add(quarantineFor), until)
		require.Equal(t, 1, told)
	}
}

// A hung request's twins are refused for as long as its executor may still
// be running it: the hang floor (configured, else the device's) and a
// health interval, when the executor checks.
func TestHangLimit(t *testing.T) {
	for _, tc := range []struct {
		name       string
		configured time.Duration
		kind       mps.Kind
		want       time.Duration
	}{
		{"the CPU's", 0, mps.KindCPU, executor.DefaultHangFloorCPU + healthInterval},
		{"a GPU's", 0, mps.KindNVIDIA, executor.DefaultHangFloor + healthInterval},
		{"configured", 3 * time.Second, mps.KindCPU, 3*time.Second + healthInterval},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := &node{}
			n.cfg.Store(&config.Config{Scheduler: config.Scheduler{HangTimeout: config.Duration(tc.configured)}})
			require.Equal(t, tc.want, n.hangLimit(&gpuletRun{device: mps.Device{Kind: tc.kind}}))
		})
	}
}

// A kernel of a run that faulted its GPU (an illegal address): the run's
// requests are suspects, even one that ran alone, since the device itself
// may have faulted; one that faults a GPU again, run alone, is
// quarantined. A request unanswered well past its deadline in a GPU's hung
// run is a suspect alike.
func TestARequestThatFaultsTheGPUTwiceIsQuarantined(t *testing.T) {
	t0 := time.Unix(1_000_000, 0)
	bad, other := digestOf(t, 1), digestOf(t, 2)
	var c crashSuspects

	e1 := executorGen{"g1", 1}
	c.lost(e1, 1, lostOf(bad), t0, time.Time{})
	c.ended(e1, endFaulted, []uint64{1}, t0)
	st, _ := c.standingOf("m", "f1", bad, t0.Add(time.Second))
	require.Equal(t, standingSuspect, st, "alone, but the device may have faulted by itself")
	st, _ = c.standingOf("m", "f1", other, t0.Add(time.Second))
	require.Equal(t, standingClear, st)

	e2 := executorGen{"g1", 2} // it runs alone, and the GPU faults again
	c.ended(e2, endFaulted, []uint64{4}, t0.Add(2*time.Second))
	c.lost(e2, 4, lostOf(bad), t0.Add(2*time.Second), time.Time{}) // its answer heard after the end
	st, _ = c.standingOf("m", "f1", bad, t0.Add(3*time.Second))
	require.Equal(t, standingQuarantined, st)

	// A GPU's hung run, found by the executor's check past its floor:
	// the request alone in it, unanswered for long, is a suspect only.
	var k crashSuspects
	e3 := executorGen{"g2", 1}
	k.lost(e3, 9, lostOf(other), t0, t0.Add(31*time.Second))
	k.ended(e3, endFaulted, []uint64{9}, t0.Add(30*time.Second))
	st, _ = k.standingOf("m", "f1", other, t0.Add(31*time.Second))
	require.Equal(t, standingSuspect, st)
}

func TestEndCauseOf(t *testing.T) {
	for _, tc := range []struct {
		cause   string
		running []uint64
		want    endCause
	}{
		{"crash", nil, endCrashed},
		{"hang", []uint64{1}, endCrashed},
		{"device_fault", []uint64{1, 2}, endFaulted},
		{"device_fault", nil, endStopped}, // the device's own, or another process's
		{"oom", []uint64{1}, endStopped},
		{"", []uint64{1}, endStopped},
	} {
		require.Equal(t, tc.want, endCauseOf(tc.cause, tc.running), "%s %v", tc.cause, tc.running)
	}
}
