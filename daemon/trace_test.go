package daemon

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/daemon/config"
)

func TestTraceSettingsRefuseWhatTheyCannotDo(t *testing.T) {
	tests := []struct {
		model   string
		changes map[string][]string
		err     string
	}{
		{"", map[string][]string{traceLevel: {"LOUD"}}, `give ["TIMESTAMPS"], ["TENSORS"], both, or ["OFF"]`},
		{"", map[string][]string{traceLevel: {"OFF", "TIMESTAMPS"}}, `give ["TIMESTAMPS"], ["TENSORS"], both, or ["OFF"]`},
		{"", map[string][]string{traceLevel: {}}, `give ["TIMESTAMPS"], ["TENSORS"], both, or ["OFF"]`},
		{"", map[string][]string{traceRate: {"0"}}, "trace_rate \"0\": give a whole number from 1"},
		{"", map[string][]string{traceCount: {"-2"}}, "from -1"},
		{"", map[string][]string{logFrequency: {"often"}}, "from 0"},
		{"", map[string][]string{traceRate: {"1", "2"}}, "takes one value, not 2"},
		{"", map[string][]string{traceFile: {"../t.json"}}, "give a file name"},
		{"", map[string][]string{traceFile: {"/tmp/t.json"}}, "give a file name"},
		{"", map[string][]string{traceMode: {"opentelemetry"}}, `this daemon's traces go to triton; trace.mode in the configuration (triton or opentelemetry) changes it at a restart`},
		{"", map[string][]string{"trace_colour": {"red"}}, `"trace_colour" is not a trace setting`},
		{"", map[string][]string{traceRate: nil}, "the global settings cannot be removed"},
		{"m", map[string][]string{traceRate: {"x"}}, "give a whole number"},
	}
	for _, tc := range tests {
		tr := newTracer(t.TempDir(), nil)
		before := traceSettingsOf(t, tr, tc.model)
		_, err := tr.update(tc.model, tc.changes)
		require.ErrorIs(t, err, errTraceSetting)
		require.ErrorContains(t, err, tc.err)
		require.Equal(t, before, traceSettingsOf(t, tr, tc.model), "nothing changed")
	}
}

// traceSettingsOf reads the settings in force for model, as a GET does.
func traceSettingsOf(t *testing.T, tr *tracer, model string) map[string][]string {
	t.Helper()
	s, err := tr.update(model, nil)
	require.NoError(t, err)
	return s
}

// newTestTracer is a tracer under dir whose writes must not fail: checked
// when the test ends, since they fail on the writer's goroutine.
func newTestTracer(t *testing.T, dir string) *tracer {
	var errs traceErrors
	tr := newTracer(dir, errs.add)
	t.Cleanup(func() {
		tr.writers.Wait()
		require.Empty(t, errs.all())
	})
	return tr
}

// traceErrors collects what a tracer says went wrong, from any goroutine.
type traceErrors struct {
	mu   sync.Mutex
	said []string
}

func (e *traceErrors) add(err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.said = append(e.said, err.Error())
}

func (e *traceErrors) all() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.said)
}

// readTraces reads a trace file once the tracer's writes handed over so
// far are done.
func readTraces(t *testing.T, tr *tracer, path string) []traceEntry {
	t.Helper()
	tr.writers.Wait()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var out []traceEntry
	require.NoError(t, json.Unmarshal(data, &out))
	return out
}

// trace sends n requests of model through the tracer, the executor
// answering each.
func trace(tr *tracer, model string, n int) {
	t0 := time.Unix(1_700_000_000, 0)
	for i := range n {
		start := t0.Add(time.Duration(i) * time.Millisecond)
		rt := tr.sample(model, model, 1, start, nil)
		rt.executorTimes(start.Add(100*time.Microsecond), 500*time.Microsecond, 300*time.Microsecond,
			execReport{queue: 100 * time.Microsecond, input: 20 * time.Microsecond, compute: 150 * time.Microsecond, output: 30 * time.Microsecond})
		tr.done(rt, start.Add(time.Millisecond), "")
	}
}

func TestTracesAreSampledAndWritten(t *testing.T) {
	dir := t.TempDir()
	tr := newTestTracer(t, dir)
	trace(tr, "m", 10)
	entries, err := os.ReadDir(dir)
	var got map[string][]string
	require.NoError(t, err)
	require.Empty(t, entries, "tracing is off by default")

	// Every second request, written two at a time.
	got, err = tr.update("", map[string][]string{traceLevel: {traceTimestamps}, traceRate: {"2"}, logFrequency: {"2"}, traceFile: {"t.json"}})
	require.NoError(t, err)
	require.Equal(t, map[string][]string{traceFile: {filepath.Join(dir, "t.json")}, traceLevel: {traceTimestamps}, traceRate: {"2"},
		traceCount: {"-1"}, logFrequency: {"2"}, traceMode: {"triton"}}, got)
	trace(tr, "m", 9)
	first := readTraces(t, tr, filepath.Join(dir, "t.json.0"))
	require.Len(t, first, 2)
	require.Len(t, readTraces(t, tr, filepath.Join(dir, "t.json.1")), 2)
	require.NoFileExists(t, filepath.Join(dir, "t.json.2"), "the ninth request was not sampled")
	e := first[0]
	require.Equal(t, "m", e.Model)
	var names []string
	for i, ts := range e.Timestamps {
		names = append(names, ts.Name)
		if i > 0 {
			require.LessOrEqual(t, e.Timestamps[i-1].NS, ts.NS, "timestamps in order")
		}
	}
	require.Equal(t, []string{"REQUEST_START", "QUEUE_START", "COMPUTE_START", "COMPUTE_INPUT_END", "COMPUTE_OUTPUT_START", "COMPUTE_END", "REQUEST_END"}, names)
	start := time.Unix(1_700_000_000, 0).Add(time.Millisecond) // the second request
	require.Equal(t, start.UnixNano(), e.Timestamps[0].NS)
	// The executor held it 300 µs of a 500 µs round trip: 100 µs each way.
	require.Equal(t, start.Add(200*time.Microsecond).UnixNano(), e.Timestamps[1].NS)
	require.Equal(t, start.Add(300*time.Microsecond).UnixNano(), e.Timestamps[2].NS)
	require.Equal(t, start.Add(320*time.Microsecond).UnixNano(), e.Timestamps[3].NS, "its inputs readied")
	require.Equal(t, start.Add(470*time.Microsecond).UnixNano(), e.Timestamps[4].NS, "the model ran")
	require.Equal(t, start.Add(500*time.Microsecond).UnixNano(), e.Timestamps[5].NS, "its outputs split")

	// A count: three traces, written when the third is taken, then none.
	_, err = tr.update("", map[string][]string{traceRate: {"1"}, traceCount: {"3"}, logFrequency: {"0"}, traceFile: {"c.json"}})
	require.NoError(t, err)
	trace(tr, "m", 5)
	require.Len(t, readTraces(t, tr, filepath.Join(dir, "c.json.0")), 3)
	require.Equal(t, []string{"0"}, traceSettingsOf(t, tr, "")[traceCount])
	require.False(t, tr.on.Load(), "no stream may take a trace: sampling takes no lock")

	// Without a log frequency, traces are written when tracing stops.
	_, err = tr.update("", map[string][]string{traceCount: {"-1"}, traceFile: {"off.json"}})
	require.NoError(t, err)
	trace(tr, "m", 2)
	require.NoFileExists(t, filepath.Join(dir, "off.json"))
	_, err = tr.update("", map[string][]string{traceLevel: {traceOff}})
	require.NoError(t, err)
	require.Len(t, readTraces(t, tr, filepath.Join(dir, "off.json")), 2)
	require.Nil(t, tr.sample("m", "m", 1, time.Now(), nil))
}

// A model's own settings trace its requests apart; taking them away
// writes what they hold, and the model follows the global ones again.
func TestAModelTracesOnItsOwnSettings(t *testing.T) {
	dir := t.TempDir()
	tr := newTestTracer(t, dir)
	got, err := tr.update("a", map[string][]string{traceLevel: {traceTimestamps}, traceRate: {"1"}, traceFile: {"a.json"}})
	require.NoError(t, err)
	require.Equal(t, []string{traceTimestamps}, got[traceLevel])
	require.Equal(t, []string{"0"}, got[logFrequency], "unset: the global one")
	require.Equal(t, []string{traceOff}, traceSettingsOf(t, tr, "")[traceLevel], "the global settings are unchanged")
	require.Equal(t, []string{traceOff}, traceSettingsOf(t, tr, "b")[traceLevel], "another model follows them")
	trace(tr, "a", 3)
	require.Nil(t, tr.sample("b", "b", 1, time.Now(), nil))

	got, err = tr.update("a", map[string][]string{traceLevel: nil, traceRate: nil, traceFile: nil})
	require.NoError(t, err)
	require.Equal(t, traceSettingsOf(t, tr, ""), got, "a follows the global settings again")
	require.Len(t, readTraces(t, tr, filepath.Join(dir, "a.json")), 3)
	require.Nil(t, tr.sample("a", "a", 1, time.Now(), nil))

	// What a stream holds when the daemon stops is written.
	_, err = tr.update("", map[string][]string{traceLevel: {traceTimestamps}, traceRate: {"1"}, traceFile: {"last.json"}})
	require.NoError(t, err)
	trace(tr, "b", 1)
	tr.close()
	require.Len(t, readTraces(t, tr, filepath.Join(dir, "last.json")), 1)
}

func TestTraceValues(t *testing.T) {
	got, err := traceValues(map[string]json.RawMessage{
		"a": json.RawMessage(`"1"`), "b": json.RawMessage(`["TIMESTAMPS"]`), "c": json.RawMessage(`null`), "d": json.RawMessage(`5`),
	})
	require.NoError(t, err)
	require.Equal(t, map[string][]string{"a": {"1"}, "b": {"TIMESTAMPS"}, "c": nil, "d": {"5"}}, got)
	for _, bad := range []string{`1.5`, `{"x": 1}`, `[1]`, `true`} {
		_, err := traceValues(map[string]json.RawMessage{"a": json.RawMessage(bad)})
		require.Error(t, err, bad)
	}
}

// No trace file is written over: indexes count on across the streams that
// write one file name, across settings changes and from the files a daemon
// started before left; trace_file itself keeps what it held.
func TestTraceFilesAreNeverWrittenOver(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "t.json.3"), []byte("[]"), 0o644))
	tr := newTestTracer(t, dir)
	on := map[string][]string{traceLevel: {traceTimestamps}, traceRate: {"1"}, logFrequency: {"1"}, traceFile: {"t.json"}}
	_, err := tr.update("", on)
	require.NoError(t, err)
	trace(tr, "m", 1)
	_, err = tr.update("a", on) // its own stream, the same file name
	require.NoError(t, err)
	trace(tr, "a", 1)
	_, err = tr.update("", map[string][]string{traceCount: {"5"}}) // the global stream starts again
	require.NoError(t, err)
	trace(tr, "m", 1)
	for i, model := range map[int]string{4: "m", 5: "a", 6: "m"} {
		got := readTraces(t, tr, filepath.Join(dir, fmt.Sprintf("t.json.%d", i)))
		require.Len(t, got, 1)
		require.Equal(t, model, got[0].Model, "t.json.%d", i)
	}

	z := map[string][]string{traceLevel: {traceTimestamps}, logFrequency: {"0"}, traceFile: {"z.json"}}
	off := map[string][]string{traceLevel: {traceOff}}
	for _, n := range []int{1, 2} {
		_, err = tr.update("", z)
		require.NoError(t, err)
		trace(tr, "m", n)
		_, err = tr.update("", off)
		require.NoError(t, err)
	}
	require.Len(t, readTraces(t, tr, filepath.Join(dir, "z.json")), 3, "the second stop's traces after the first's")
}

// Traces beyond what a stream may hold unwritten are dropped, and the log
// says so: when the first is, and how many when the others are written.
func TestDroppedTracesAreSaid(t *testing.T) {
	dir := t.TempDir()
	var said traceErrors
	tr := newTracer(dir, said.add)
	tr.maxBuffered = 2
	_, err := tr.update("", map[string][]string{traceLevel: {traceTimestamps}, traceRate: {"1"}, traceFile: {"d.json"}})
	require.NoError(t, err)
	trace(tr, "m", 5)
	require.Equal(t, []string{"drop traces of the global settings: 2 are held, not yet written (log_frequency 0); set a log_frequency below that"}, said.all())
	tr.close()
	require.Len(t, readTraces(t, tr, filepath.Join(dir, "d.json")), 2)
	require.Equal(t, "write traces d.json: 3 traces taken meanwhile were dropped (more than 2 held)", said.all()[1])
}

// Writing a file does not hold requests up: while the writer is stuck
// (a slow disk), requests are still sampled and answered, and their traces
// go to the next file; close waits for every write. Before, the write ran
// under the lock every request takes, and on an H200 each file of 4 000
// traces stalled serving for about 40 ms, refusing a 5 ms model's
// requests.
func TestSlowTraceWritesDoNotHoldRequests(t *testing.T) {
	dir := t.TempDir()
	tr := newTestTracer(t, dir)
	stuck, release := make(chan string, 4), make(chan struct{})
	var releaseOnce sync.Once
	unstick := func() { releaseOnce.Do(func() { close(release) }) }
	t.Cleanup(unstick) // before the tracer's cleanup waits for its writer
	write := tr.writeFile
	tr.writeFile = func(path string, data []byte) error {
		stuck <- filepath.Base(path)
		<-release
		return write(path, data)
	}
	_, err := tr.update("", map[string][]string{traceLevel: {traceTimestamps}, traceRate: {"1"}, logFrequency: {"2"}, traceFile: {"s.json"}})
	require.NoError(t, err)
	trace(tr, "m", 2) // the first file goes to the writer, which sticks
	require.Equal(t, "s.json.0", <-stuck)

	answered := make(chan struct{})
	go func() {
		defer close(answered)
		trace(tr, "m", 5) // two more files, and one trace held
	}()
	select {
	case <-answered:
	case <-time.After(time.Minute):
		unstick()
		t.Fatal("requests waited for the trace file being written")
	}
	pending, _ := tr.pending()
	require.Equal(t, 6, pending, "the files after the first wait for it")
	unstick()
	tr.close()
	for i, n := range []int{2, 2, 2, 1} { // the last: the one held, written at close
		require.Len(t, readTraces(t, tr, filepath.Join(dir, fmt.Sprintf("s.json.%d", i))), n)
	}
}

// The executor's times stay inside the round trip, in order, even when it
// reports more queue and compute than it held the request (the longest of
// each over rows that ran in several batches): COMPUTE_END came after
// REQUEST_END once in an end-to-end run.
func TestExecutorTimesStayInsideTheRoundTrip(t *testing.T) {
	sent := time.Unix(1_700_000_000, 0)
	us := func(n int) time.Duration { return time.Duration(n) * time.Microsecond }
	for _, tc := range []struct {
		name       string
		trip, held time.Duration
		r          execReport
	}{
		{"as held", us(500), us(300), execReport{queue: us(100), compute: us(150)}},
		{"more than held", us(500), us(300), execReport{queue: us(250), compute: us(150)}},
		{"more than the trip", us(400), us(350), execReport{queue: us(250), compute: us(300)}},
		{"inputs and outputs past the trip", us(400), us(350), execReport{queue: us(100), input: us(200), compute: us(100), output: us(200)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt := &reqTrace{}
			rt.executorTimes(sent, tc.trip, tc.held, tc.r)
			end := rt.exec.end()
			require.False(t, rt.exec.queued.Before(sent))
			require.False(t, rt.exec.ran.Before(rt.exec.queued))
			require.False(t, rt.exec.inputEnd().Before(rt.exec.ran))
			require.False(t, rt.exec.outputStart().Before(rt.exec.inputEnd()))
			require.False(t, end.Before(rt.exec.outputStart()))
			require.False(t, end.After(sent.Add(tc.trip)), "compute ends before the answer is back: %v", end.Sub(sent))
		})
	}
}

// The configuration's trace settings are the ones the daemon starts with:
// the defaults change nothing, others are the extension's settings at once
// and sample as they say.
func TestTraceSettingsAtStart(t *testing.T) {
	fresh := newTestTracer(t, t.TempDir())
	before := traceSettingsOf(t, fresh, "")
	_, err := fresh.update("", startTraceSettings(config.Default().Trace))
	require.NoError(t, err)
	require.Equal(t, before, traceSettingsOf(t, fresh, ""), "the defaults are Triton's, the tracer's own")

	c := config.Default().Trace
	c.Level, c.Rate, c.Count, c.LogFrequency, c.File = []string{traceTimestamps}, 2, 3, 10, "start.json"
	tr := newTestTracer(t, t.TempDir())
	got, err := tr.update("", startTraceSettings(c))
	require.NoError(t, err)
	require.Equal(t, []string{traceTimestamps}, got[traceLevel])
	require.Equal(t, []string{"2"}, got[traceRate])
	require.Equal(t, []string{"3"}, got[traceCount])
	require.Equal(t, []string{"10"}, got[logFrequency])
	require.Equal(t, "start.json", filepath.Base(got[traceFile][0]))
	require.Nil(t, tr.sample("m", "m", 1, time.Now(), nil))
	require.NotNil(t, tr.sample("m", "m", 1, time.Now(), nil), "one in two")
}
