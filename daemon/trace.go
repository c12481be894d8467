package daemon

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gpulet/gpuletd/daemon/config"
	pb "github.com/gpulet/gpuletd/executor/executorpb"
	"github.com/gpulet/gpuletd/executor/tensor"
	"github.com/gpulet/gpuletd/internal/atomicfile"
	"github.com/gpulet/gpuletd/kserve"
)

// Triton's trace extension: GET and POST /v2[/models/<m>]/trace/setting
// and gRPC TraceSetting read and change which requests are traced, and a
// traced request's timestamps are written, as JSON, to files under
// <state_dir>/traces (or exported as spans: trace_otel.go). The settings
// are global, and a model may override any of them (the others follow the
// global ones); a model with its own settings samples, counts and writes
// its traces apart. At level
// TIMESTAMPS a trace says when the request arrived (REQUEST_START), entered
// its executor's queue (QUEUE_START), its batch ran (COMPUTE_START,
// COMPUTE_END) and it was answered (REQUEST_END); at level TENSORS the file
// holds, after it, an entry per input the request brought
// (TENSOR_QUEUE_INPUT) and per output it was answered with
// (TENSOR_BACKEND_OUTPUT), each tensor's values as text. The executor's
// times are placed halfway along the hop to it and back, which is tens of
// microseconds on an idle host; a pipeline's or a cached answer has only
// REQUEST_START and REQUEST_END, and each step request of a traced
// pipeline request has a trace of its own that names the pipeline's
// (parent_id), as Triton traces an ensemble's.

// The trace extension's settings.
const (
	traceFile    = "trace_file"
	traceLevel   = "trace_level"
	traceRate    = "trace_rate"
	traceCount   = "trace_count"
	logFrequency = "log_frequency"
	traceMode    = "trace_mode"
)

// Trace levels.
const (
	traceOff        = config.TraceLevelOff
	traceTimestamps = config.TraceLevelTimestamps
	traceTensors    = config.TraceLevelTensors
)

// traceLevels are the levels a stream traces at: none (OFF), TIMESTAMPS,
// TENSORS or both.
type traceLevels uint8

const (
	levelTimestamps traceLevels = 1 << iota
	levelTensors
)

// names are the levels as the settings give them.
func (l traceLevels) names() []string {
	if l == 0 {
		return []string{traceOff}
	}
	var out []string
	if l&levelTimestamps != 0 {
		out = append(out, traceTimestamps)
	}
	if l&levelTensors != 0 {
		out = append(out, traceTensors)
	}
	return out
}

// Activities of a traced tensor.
const (
	activityQueueInput    = "TENSOR_QUEUE_INPUT"
	activityBackendOutput = "TENSOR_BACKEND_OUTPUT"
)

// maxBufferedTraces bounds the traces one stream holds before they are
// written; more are dropped (log_frequency 0 writes only when tracing
// stops). maxBufferedTraceBytes bounds the tensors' text they hold at
// level TENSORS the same way.
const (
	maxBufferedTraces     = 100_000
	maxBufferedTraceBytes = 256 << 20
)

// errTraceSetting is a trace setting gpuletd cannot take.
var errTraceSetting = errors.New("trace setting refused")

// traceConfig is one stream's settings.
type traceConfig struct {
	mode      string // trace.mode: triton, or opentelemetry (trace_otel.go)
	levels    traceLevels
	rate      int64
	count     int64 // -1: no limit
	frequency int64 // log_frequency; 0: write when tracing stops
	file      string
}

// defaultTraceConfig is Triton's defaults, the file named: the
// configuration's trace settings at start (config.Default), tracing off.
var defaultTraceConfig = func() traceConfig {
	d := config.Default().Trace
	return traceConfig{mode: d.Mode, rate: d.Rate, count: d.Count, frequency: d.LogFrequency, file: d.File}
}()

// set takes one setting's value (a JSON string or array of strings, or a
// gRPC value list).
func (c *traceConfig) set(name string, values []string) error {
	one := func() (string, error) {
		if len(values) != 1 {
			return "", fmt.Errorf("%w: %s takes one value, not %d", errTraceSetting, name, len(values))
		}
		return values[0], nil
	}
	number := func(min int64) (int64, error) {
		v, err := one()
		if err != nil {
			return 0, err
		}
		n, perr := strconv.ParseInt(v, 10, 64)
		if perr != nil || n < min {
			return 0, fmt.Errorf("%w: %s %q: give a whole number from %d", errTraceSetting, name, v, min)
		}
		return n, nil
	}
	var err error
	switch name {
	case traceLevel:
		var l traceLevels
		for _, v := range values {
			switch v {
			case traceTimestamps:
				l |= levelTimestamps
			case traceTensors:
				l |= levelTensors
			}
		}
		if len(values) == 0 || !config.TraceLevelsValid(values) {
			return fmt.Errorf("%w: %s %q: give [\"%s\"], [\"%s\"], both, or [\"%s\"]", errTraceSetting, name, values, traceTimestamps, traceTensors, traceOff)
		}
		if l&levelTensors != 0 && c.mode == config.TraceModeOpenTelemetry {
			return fmt.Errorf("%w: %s %s: tensors are written to trace files only (trace.mode %s), as in Triton", errTraceSetting, name, traceTensors, config.TraceModeTriton)
		}
		c.levels = l
	case traceRate:
		// 0 takes no request by the rate: only those that bring a
		// sampled trace context (trace_context.go), which only a
		// collector's traces join, as Triton's rate=0 has it.
		c.rate, err = number(config.MinTraceRate(c.mode))
	case traceCount:
		c.count, err = number(-1)
	case logFrequency:
		c.frequency, err = number(0)
	case traceFile:
		var v string
		if v, err = one(); err == nil && !config.TraceFileName(v) {
			err = fmt.Errorf("%w: %s %q: give a file name; traces are written in the daemon's state directory, under traces/", errTraceSetting, name, v)
		}
		c.file = v
	case traceMode:
		var v string
		if v, err = one(); err == nil && v != c.mode {
			err = fmt.Errorf("%w: %s %q: this daemon's traces go to %s; trace.mode in the configuration (%s or %s) changes it at a restart",
				errTraceSetting, name, v, c.mode, config.TraceModeTriton, config.TraceModeOpenTelemetry)
		}
	default:
		err = fmt.Errorf("%w: %q is not a trace setting; the settings are %s, %s, %s, %s, %s and %s",
			errTraceSetting, name, traceFile, traceLevel, traceRate, traceCount, logFrequency, traceMode)
	}
	return err
}

// traceStream is the traces of one set of settings: the global ones, or a
// model's own.
type traceStream struct {
	cfg       traceConfig
	seen      int64 // requests counted for the rate
	remaining int64 // traces still to take; -1: no limit
	buf       []traceEntry
	bytes     int // the tensors' text in buf
	dropped   int64
}

// traceEntry is one traced request as the trace file holds it.
type traceEntry struct {
	ID uint64 `json:"id"`
	// ParentID is the pipeline request's trace of a step request's.
	ParentID   uint64           `json:"parent_id,omitempty"`
	Model      string           `json:"model_name"`
	Version    int              `json:"model_version"`
	RequestID  string           `json:"request_id,omitempty"`
	Error      string           `json:"error,omitempty"`
	Timestamps []traceTimestamp `json:"timestamps,omitempty"`
	// tensors follow the trace in its file, each an entry of its own.
	tensors []traceTensorEntry
}

// tensorBytes is the text of the trace's tensors, which the bound on what
// a stream holds counts.
func (e *traceEntry) tensorBytes() int {
	n := 0
	for _, te := range e.tensors {
		n += len(te.Tensor.Data)
	}
	return n
}

// traceTensorEntry is one traced tensor as the trace file holds it.
type traceTensorEntry struct {
	ID       uint64      `json:"id"`
	Activity string      `json:"activity"`
	Tensor   traceTensor `json:"tensor"`
}

// traceTensor is a tensor as a trace file writes it: its values and shape
// comma-separated.
type traceTensor struct {
	Name  string `json:"name"`
	Data  string `json:"data"`
	Shape string `json:"shape"`
	DType string `json:"dtype"`
}

type traceTimestamp struct {
	Name string `json:"name"`
	NS   int64  `json:"ns"`
}

// reqTrace is a request being traced.
type reqTrace struct {
	stream string // "" global, else the model's
	levels traceLevels
	otel   otelIDs // its spans' ids when traces go to a collector
	entry  traceEntry
	start  time.Time
	// exec holds the executor's times once it answered.
	exec execTimes
}

// execTimes are a traced request's times in its executor, placed on the
// daemon's clock (executorTimes): set once the executor answered.
type execTimes struct {
	set                    bool
	queued, ran            time.Time
	input, compute, output time.Duration
}

// inputEnd, outputStart and end are Triton's COMPUTE_INPUT_END,
// COMPUTE_OUTPUT_START and COMPUTE_END; ran is COMPUTE_START.
func (x execTimes) inputEnd() time.Time    { return x.ran.Add(x.input) }
func (x execTimes) outputStart() time.Time { return x.inputEnd().Add(x.compute) }
func (x execTimes) end() time.Time         { return x.outputStart().Add(x.output) }

// computeTimestamps are the trace file's timestamps of x, from QUEUE_START
// to COMPUTE_END.
func (x execTimes) computeTimestamps() []traceTimestamp {
	return []traceTimestamp{{"QUEUE_START", x.queued.UnixNano()}, {"COMPUTE_START", x.ran.UnixNano()},
		{"COMPUTE_INPUT_END", x.inputEnd().UnixNano()}, {"COMPUTE_OUTPUT_START", x.outputStart().UnixNano()}, {"COMPUTE_END", x.end().UnixNano()}}
}

// execReport is what an executor said of a request's time there: waiting
// in its queue, readying the batch's inputs, the model's run, and the
// outputs.
type execReport struct{ queue, input, compute, output time.Duration }

// reportOf reads an executor's answer's times.
func reportOf(res *pb.InferResponse) execReport {
	us := func(v int64) time.Duration { return time.Duration(v) * time.Microsecond }
	return execReport{queue: us(res.QueueUs), input: time.Duration(res.ComputeInputNs), compute: us(res.ComputeUs), output: time.Duration(res.ComputeOutputNs)}
}

// tracer keeps the trace settings and the traces taken.
type tracer struct {
	dir string
	on  atomic.Bool // some stream may still take a trace by its rate (refreshOnLocked)
	// contexts: some stream takes the requests that bring a sampled
	// trace context (refreshOnLocked): traces go to a collector and its
	// level is not OFF.
	contexts atomic.Bool
	nextID   atomic.Uint64

	mu        sync.Mutex
	global    traceConfig
	overrides map[string]map[string][]string // a model's own settings, by name
	streams   map[string]*traceStream        // "" global, else a model with overrides
	indexes   map[string]int                 // the next index of each file name (nextFileLocked)
	// maxBuffered bounds the traces a stream holds, and those handed to
	// the writer and not yet written (maxBufferedTraces), and the bytes of
	// tensor text they may hold (maxBufferedTraceBytes).
	maxBuffered      int
	maxBufferedBytes int
	writeErr         func(error)
	// otel exports the traces as spans instead of files (exportTo); nil:
	// files.
	otel *otelExporter

	// The files are written off the request path (drain): a request's
	// sampling and answer take mu, and a write of thousands of traces
	// (tens of milliseconds with the file's sync) under it held up every
	// request arriving meanwhile, past a short SLO.
	wmu       sync.Mutex
	queue     []traceWrite // in the order the files were named
	queued    int          // traces in queue
	queuedB   int          // and the bytes of their tensors' text
	writing   bool         // a drain goroutine runs
	handed    uint64       // files handed to the writer so far
	written   uint64       // and written (or failed)
	wrote     *sync.Cond   // on wmu: written moved
	writers   sync.WaitGroup
	writeFile func(path string, data []byte) error
}

// traceWrite is one file's worth of traces handed to the writer.
type traceWrite struct {
	name    string
	entries []traceEntry
	bytes   int   // the tensors' text in entries
	dropped int64 // traces dropped since the stream's last write
}

// newTracer writes its files under dir; failed writes go to writeErr.
func newTracer(dir string, writeErr func(error)) *tracer {
	t := &tracer{dir: dir, global: defaultTraceConfig, overrides: map[string]map[string][]string{},
		streams: map[string]*traceStream{}, indexes: map[string]int{}, writeErr: writeErr,
		maxBuffered: maxBufferedTraces, maxBufferedBytes: maxBufferedTraceBytes, writeFile: func(path string, data []byte) error { return atomicfile.Write(path, data, 0o640) }}
	t.streams[""] = &traceStream{cfg: t.global, remaining: t.global.count}
	t.wrote = sync.NewCond(&t.wmu)
	return t
}

// exportTo sends the traces to a collector as spans instead of writing
// files (trace.mode opentelemetry); called once, before the tracer is
// used. close stops e.
func (t *tracer) exportTo(e *otelExporter) {
	t.otel = e
	t.global.mode = config.TraceModeOpenTelemetry
	t.streams[""] = &traceStream{cfg: t.global, remaining: t.global.count}
}

// configOf is model's settings: the global ones with its own on top
// (checked by update before they were kept).
func (t *tracer) configOf(model string) traceConfig {
	c := t.global
	over := t.overrides[model]
	for _, name := range slices.Sorted(maps.Keys(over)) {
		_ = c.set(name, over[name])
	}
	return c
}

// settingsLocked answers the settings in force for model ("" the global
// ones).
func (t *tracer) settingsLocked(model string) map[string][]string {
	c := t.configOf(model)
	st := t.streams[t.streamKey(model)]
	remaining := c.count
	if st != nil {
		remaining = st.remaining
	}
	return map[string][]string{
		traceFile: {filepath.Join(t.dir, c.file)}, traceLevel: c.levels.names(), traceRate: {strconv.FormatInt(c.rate, 10)},
		traceCount: {strconv.FormatInt(remaining, 10)}, logFrequency: {strconv.FormatInt(c.frequency, 10)}, traceMode: {c.mode},
	}
}

// streamKey is the stream a model's requests go to.
func (t *tracer) streamKey(model string) string {
	if len(t.overrides[model]) > 0 {
		return model
	}
	return ""
}

// update changes the settings of model ("" the global ones): a nil value
// takes a model's own setting away (the global one holds again). All or
// none apply. Traces the old settings hold are written first; the streams
// changed start counting again.
// The answer waits until the traces written on the way are in their files,
// so that a file can be read once tracing is turned off.
func (t *tracer) update(model string, changes map[string][]string) (map[string][]string, error) {
	t.mu.Lock()
	settings, err := t.updateLocked(model, changes)
	t.wmu.Lock()
	handed := t.handed
	t.wmu.Unlock()
	t.mu.Unlock()
	t.waitWritten(handed)
	return settings, err
}

// updateLocked is update under mu.
func (t *tracer) updateLocked(model string, changes map[string][]string) (map[string][]string, error) {
	if len(changes) == 0 {
		return t.settingsLocked(model), nil
	}
	global := t.global
	overrides := maps.Clone(t.overrides)
	for _, name := range slices.Sorted(maps.Keys(changes)) {
		v := changes[name]
		switch {
		case model == "" && v == nil:
			return nil, fmt.Errorf("%w: %s: the global settings cannot be removed, only changed", errTraceSetting, name)
		case model == "":
			if err := global.set(name, v); err != nil {
				return nil, err
			}
		default:
			own := maps.Clone(overrides[model])
			if own == nil {
				own = map[string][]string{}
			}
			if v == nil {
				delete(own, name)
			} else {
				if err := (&traceConfig{mode: t.global.mode}).set(name, v); err != nil {
					return nil, err
				}
				own[name] = slices.Clone(v)
			}
			overrides[model] = own
			if len(own) == 0 {
				delete(overrides, model)
			}
		}
	}
	// Every stream whose settings change writes what it holds and starts
	// again; the others go on.
	old := map[string]traceConfig{}
	for key := range t.streams {
		old[key] = t.configOf(key)
	}
	t.global, t.overrides = global, overrides
	for key, st := range t.streams {
		now := t.configOf(key)
		if key != "" && len(t.overrides[key]) == 0 {
			t.flushLocked(st, true)
			delete(t.streams, key)
			continue
		}
		if now != old[key] {
			t.flushLocked(st, true)
			t.streams[key] = &traceStream{cfg: now, remaining: now.count}
		}
	}
	for key := range t.overrides {
		if _, ok := t.streams[key]; !ok && len(t.overrides[key]) > 0 {
			c := t.configOf(key)
			t.streams[key] = &traceStream{cfg: c, remaining: c.count}
		}
	}
	t.refreshOnLocked()
	return t.settingsLocked(model), nil
}

// refreshOnLocked says whether some stream may still take a trace by its
// rate (its level is not OFF, its rate not 0 and its count has not run
// out) and whether some stream takes the requests that bring a sampled
// trace context. While none may, a request's sampling takes no lock and
// reads no header.
func (t *tracer) refreshOnLocked() {
	on, contexts := false, false
	for _, st := range t.streams {
		on = on || (st.cfg.levels != 0 && st.cfg.rate > 0 && st.remaining != 0)
		contexts = contexts || (st.cfg.levels != 0 && t.otel != nil)
	}
	t.on.Store(on)
	t.contexts.Store(contexts)
}

// sample decides whether a request of model (its family and version)
// arriving at start is traced: nil when not. brought reads the trace
// context the request brings (nil: none); it is read only when traces go
// to a collector and some level is on. The stream's rate and count pick
// requests; one whose context is sampled is traced whatever they say, as
// Triton traces a request with a propagated context (it counts for the
// rate as any other). A traced request that brought a context joins its
// trace under the caller's span.
func (t *tracer) sample(model, family string, version int, start time.Time, brought func() traceContext) *reqTrace {
	if t == nil {
		return nil
	}
	var from traceContext
	if brought != nil && t.contexts.Load() {
		from = brought()
	}
	if !t.on.Load() && !from.sampled {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	key := t.streamKey(model)
	st := t.streams[key]
	if st == nil || st.cfg.levels == 0 {
		return nil
	}
	hit := false
	if st.remaining != 0 && st.cfg.rate > 0 {
		st.seen++
		hit = st.seen%st.cfg.rate == 0
	}
	if !hit && !from.sampled {
		return nil
	}
	if hit && st.remaining > 0 {
		st.remaining--
		if st.remaining == 0 {
			t.refreshOnLocked()
		}
	}
	tr := &reqTrace{stream: key, levels: st.cfg.levels, start: start, entry: traceEntry{ID: t.nextID.Add(1), Model: family, Version: version}}
	if t.otel != nil {
		tr.otel = otelIDs{trace: randomID(16), parent: randomID(8), model: randomID(8)}
		if from.valid() {
			tr.otel.trace, tr.otel.caller, tr.otel.state = from.trace, from.span, from.state
		}
	}
	return tr
}

// child starts the trace of a step request that a traced pipeline request
// (parent; nil: none) sends at start: it goes with the parent's traces,
// named after it.
func (t *tracer) child(parent *reqTrace, start time.Time) *reqTrace {
	if parent == nil {
		return nil
	}
	tr := &reqTrace{stream: parent.stream, levels: parent.levels, start: start, entry: traceEntry{ID: t.nextID.Add(1), ParentID: parent.entry.ID}}
	if parent.otel.trace != "" {
		tr.otel = otelIDs{trace: parent.otel.trace, parent: parent.otel.model, model: randomID(8), state: parent.otel.state}
	}
	return tr
}

// done books a traced request answered at end (with errMsg when it
// failed), and writes its stream's traces when log_frequency or the
// count says so.
func (t *tracer) done(tr *reqTrace, end time.Time, errMsg string) {
	if tr == nil {
		return
	}
	if t.otel != nil {
		t.otel.add(tr.spans(end, errMsg))
		return
	}
	if tr.levels&levelTimestamps != 0 {
		ts := []traceTimestamp{{"REQUEST_START", tr.start.UnixNano()}}
		if x := tr.exec; x.set {
			ts = append(ts, x.computeTimestamps()...)
		}
		tr.entry.Timestamps = append(ts, traceTimestamp{"REQUEST_END", end.UnixNano()})
	}
	tr.entry.Error = errMsg
	t.mu.Lock()
	defer t.mu.Unlock()
	st := t.streams[tr.stream]
	if st == nil {
		return // its settings changed meanwhile and it was written
	}
	pending, pendingBytes := t.pending()
	bytes := tr.entry.tensorBytes()
	held, heldBytes := len(st.buf)+pending, st.bytes+pendingBytes+bytes
	if held >= t.maxBuffered || heldBytes > t.maxBufferedBytes {
		if st.dropped++; st.dropped == 1 && t.writeErr != nil {
			tensors := ""
			if heldBytes > 0 {
				tensors = fmt.Sprintf(", with %d bytes of tensors", heldBytes)
			}
			t.writeErr(fmt.Errorf("drop traces of %s: %d are held, not yet written%s (%s %d); set a %s below that",
				cmp.Or(tr.stream, "the global settings"), held, tensors, logFrequency, st.cfg.frequency, logFrequency))
		}
		return
	}
	st.buf = append(st.buf, tr.entry)
	st.bytes += bytes
	switch {
	case st.cfg.frequency > 0 && int64(len(st.buf)) >= st.cfg.frequency:
		t.flushLocked(st, false)
	case st.remaining == 0:
		t.writeLocked(st, t.nextFileLocked(st.cfg.file))
	}
}

// nextFileLocked names the indexed file the next traces of file go to:
// indexes count on across every stream writing that file name and, at the
// first write, from the files already there (a daemon started again), so
// that no traces are written over.
func (t *tracer) nextFileLocked(file string) string {
	n, ok := t.indexes[file]
	if !ok {
		entries, _ := os.ReadDir(t.dir) // none yet: from 0
		for _, e := range entries {
			if suffix, found := strings.CutPrefix(e.Name(), file+"."); found {
				if i, err := strconv.Atoi(suffix); err == nil && i >= n {
					n = i + 1
				}
			}
		}
	}
	t.indexes[file] = n + 1
	return fmt.Sprintf("%s.%d", file, n)
}

// flushLocked writes what a stream holds: to the indexed file next in
// turn with a log_frequency, else (final: tracing stops or changes) to
// trace_file itself.
func (t *tracer) flushLocked(st *traceStream, final bool) {
	if len(st.buf) == 0 {
		return
	}
	if st.cfg.frequency > 0 || !final {
		t.writeLocked(st, t.nextFileLocked(st.cfg.file))
		return
	}
	t.writeLocked(st, st.cfg.file)
}

// writeLocked hands the stream's traces to the writer, for the file
// name, and empties it.
func (t *tracer) writeLocked(st *traceStream, name string) {
	if len(st.buf) == 0 {
		return
	}
	w := traceWrite{name: name, entries: st.buf, bytes: st.bytes, dropped: st.dropped}
	st.buf, st.bytes, st.dropped = nil, 0, 0
	t.wmu.Lock()
	t.queue = append(t.queue, w)
	t.queued += len(w.entries)
	t.queuedB += w.bytes
	t.handed++
	start := !t.writing
	t.writing = true
	t.wmu.Unlock()
	if start {
		t.writers.Add(1)
		go t.drain()
	}
}

// pending is how many traces the writer has not written yet, and the
// bytes of their tensors' text.
func (t *tracer) pending() (traces, bytes int) {
	t.wmu.Lock()
	defer t.wmu.Unlock()
	return t.queued, t.queuedB
}

// drain writes the queued files in turn and ends when none is left; one
// runs at a time, so a file name's writes keep their order. close waits
// for it.
func (t *tracer) drain() {
	defer t.writers.Done()
	for {
		t.wmu.Lock()
		if len(t.queue) == 0 {
			t.writing = false
			t.wmu.Unlock()
			return
		}
		w := t.queue[0]
		t.queue[0] = traceWrite{}
		t.queue = t.queue[1:]
		t.wmu.Unlock()
		t.write(w)
		t.wmu.Lock()
		t.queued -= len(w.entries)
		t.queuedB -= w.bytes
		t.written++
		t.wrote.Broadcast()
		t.wmu.Unlock()
	}
}

// waitWritten waits until the first n files handed to the writer are
// written.
func (t *tracer) waitWritten(n uint64) {
	t.wmu.Lock()
	defer t.wmu.Unlock()
	for t.written < n {
		t.wrote.Wait()
	}
}

// write writes one file's traces, as a JSON array; the traces a file of
// that name holds already (trace_file written when tracing stopped
// before) stay, first.
func (t *tracer) write(w traceWrite) {
	if w.dropped > 0 && t.writeErr != nil {
		t.writeErr(fmt.Errorf("write traces %s: %d traces taken meanwhile were dropped (more than %d held)", w.name, w.dropped, t.maxBuffered))
	}
	path := filepath.Join(t.dir, w.name)
	var all []json.RawMessage
	if old, err := os.ReadFile(path); err == nil && json.Unmarshal(old, &all) != nil {
		all = nil // not a trace file: written over
	}
	for _, e := range w.entries {
		b, err := json.Marshal(e)
		if err == nil {
			all = append(all, b)
		}
		for _, te := range e.tensors {
			if b, err := json.Marshal(te); err == nil {
				all = append(all, b)
			}
		}
	}
	data, err := json.MarshalIndent(all, "", " ")
	if err == nil {
		err = os.MkdirAll(t.dir, 0o750)
	}
	if err == nil {
		err = t.writeFile(path, data)
	}
	if err != nil && t.writeErr != nil {
		t.writeErr(fmt.Errorf("write traces %s: %w", w.name, err))
	}
}

// close writes every stream's traces and waits until they are written
// (the daemon stops).
func (t *tracer) close() {
	t.mu.Lock()
	for _, st := range t.streams {
		t.flushLocked(st, true)
	}
	t.mu.Unlock()
	t.writers.Wait()
	if t.otel != nil {
		t.otel.close()
	}
}

// TracesDir is the folder a daemon of state directory stateDir writes its
// trace files into (trace_file names a file there).
func TracesDir(stateDir string) string { return filepath.Join(stateDir, "traces") }

// traceKey carries a request's trace in its context.
type traceKey struct{}

func withTrace(ctx context.Context, tr *reqTrace) context.Context {
	if tr == nil {
		return ctx
	}
	return context.WithValue(ctx, traceKey{}, tr)
}

func traceOf(ctx context.Context) *reqTrace {
	tr, _ := ctx.Value(traceKey{}).(*reqTrace)
	return tr
}

// tensors books what a traced request at level TENSORS brought or was
// answered with (activity).
func (tr *reqTrace) tensors(activity string, ts []tensor.Tensor) {
	if tr == nil || tr.levels&levelTensors == 0 {
		return
	}
	for _, t := range ts {
		data, err := kserve.TensorText(t)
		if err != nil {
			data = "(unreadable: " + err.Error() + ")"
		}
		tr.entry.tensors = append(tr.entry.tensors, traceTensorEntry{ID: tr.entry.ID, Activity: activity,
			Tensor: traceTensor{Name: t.Name, Data: data, Shape: kserve.ShapeText(t.Shape), DType: string(t.DataType)}})
	}
}

// executorTimes books what the executor said of a traced request sent at
// sent and answered after trip, holding it held of that: its queue time and
// its batch's (inputs, run, outputs), placed halfway along the hop. They are
// held inside the round trip, since they need not fit in it as reported: a
// request's rows that ran in several batches report the longest of each
// over them, whose sum can pass what the executor held it, and the
// executor's held and the daemon's trip are measured by two processes at
// different moments of the same frames. A batch placed past the answer
// would put COMPUTE_END after REQUEST_END; one that does not fit is
// shortened, each part alike.
func (tr *reqTrace) executorTimes(sent time.Time, trip, held time.Duration, r execReport) {
	if tr == nil {
		return
	}
	queue := min(r.queue, trip)
	batch := r.input + r.compute + r.output
	if room := trip - queue; batch > room {
		f := float64(room) / float64(batch)
		scale := func(d time.Duration) time.Duration { return time.Duration(float64(d) * f) }
		r.input, r.compute, r.output = scale(r.input), scale(r.compute), scale(r.output)
		batch = r.input + r.compute + r.output
	}
	hop := max(trip-max(held, queue+batch), 0) / 2
	x := &tr.exec
	x.set = true
	x.queued = sent.Add(hop)
	x.ran = x.queued.Add(queue)
	x.input, x.compute, x.output = r.input, r.compute, r.output
}

// startTraceSettings are the global trace settings the configuration
// starts the daemon with (trace.level, rate, count, log_frequency and
// file, Triton's --trace-config at start), as the trace extension takes
// them.
func startTraceSettings(c config.Trace) map[string][]string {
	level := c.Level
	if len(level) == 0 {
		level = []string{traceOff}
	}
	return map[string][]string{
		traceLevel: level, traceRate: {strconv.FormatInt(c.Rate, 10)}, traceCount: {strconv.FormatInt(c.Count, 10)},
		logFrequency: {strconv.FormatInt(c.LogFrequency, 10)}, traceFile: {c.File},
	}
}
