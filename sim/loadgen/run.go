package loadgen

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/gpulet/gpuletd/internal/hrtimer"
	"github.com/gpulet/gpuletd/kserve"
	pb "github.com/gpulet/gpuletd/kserve/inferencepb"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// maxAnswer bounds a gRPC message either way (the daemon's own bound is
// limits.max_request_body).
const maxAnswer = 1 << 30

// job is one request due at a moment of the schedule.
type job struct {
	at     time.Time
	t      *tally // the window it falls due in; nil during the warm-up
	second int    // the second of that window
	seq    uint64 // its sequence's ID, a stateful model's; 0 for another
}

// tally collects what became of the requests that fell due in one
// measurement window.
type tally struct {
	// start and end bound the window (segments).
	start, end time.Time
	// The schedule alone writes these (a closed loop's senders under
	// their lock): the requests due, sent and dropped, the most in flight,
	// and the due and dropped of each second.
	scheduled, sent, dropped int64
	maxInFlight              int64
	due                      []Second
	// pending counts the window's requests still in flight.
	pending sync.WaitGroup
	// The workers write the rest under mu.
	mu         sync.Mutex
	latency    *hdrhistogram.Histogram
	lag        *hdrhistogram.Histogram
	ok, within int64
	failed     map[string]int64
	firstError string
	respBytes  int64
	seconds    []Second // by the second of the window a request fell due in
	// exported are the window's requests one by one (Config.Export);
	// exportCut is set when MaxExported left some out.
	exported  []ExportedRequest
	exportCut bool
}

// newTally starts an empty window's tally.
func newTally() *tally {
	return &tally{latency: histogram(), lag: histogram(), failed: map[string]int64{}}
}

// second returns the tally of second i, growing the list to hold it.
func (t *tally) second(i int) *Second {
	t.seconds = grow(t.seconds, i)
	return &t.seconds[i]
}

// grow returns ss long enough to hold second i.
func grow(ss []Second, i int) []Second {
	for len(ss) <= i {
		ss = append(ss, Second{})
	}
	return ss
}

// Run sends requests to cfg.Model on the schedule of cfg.Arrivals for
// cfg.Warmup + cfg.Duration and reports what came back. It fetches the
// model's metadata and SLO first when cfg.Payload or cfg.SLO are not given.
// When ctx ends early Run stops sending, cancels what is in flight and
// returns the report so far with ctx's error.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	client := cfg.Client
	if client == nil {
		client = NewClient(cfg.Concurrency, cfg.TLS, cfg.Header)
		defer client.CloseIdleConnections()
	}
	// A run that sends over gRPC asks everything there (control).
	var ctl control = restControl{client: client, base: cfg.URL}
	var grpcClient pb.GRPCInferenceServiceClient
	if cfg.GRPC != "" {
		conn, c, err := DialGRPC(ctx, cfg.GRPC, cfg.TLS, cfg.Header)
		if err != nil {
			return nil, err
		}
		defer conn.Close()
		grpcClient, ctl = c, grpcControl{c: c}
	}
	var shmGRPC *pb.ModelInferRequest
	var extra []*Payload     // the distinct requests after cfg.Payload (Inputs)
	var streams [][]*Payload // a data file's streams, a stateful model's sequences
	stateful := false
	if cfg.Payload == nil || cfg.SLO == 0 || cfg.SharedMemory {
		m, err := ctl.model(ctx, cfg.Model, cfg.ModelVersion)
		if err != nil {
			return nil, err
		}
		streamed := cfg.Data != nil && cfg.Data.Streams() > 0
		if stateful = m.Stateful; stateful && (cfg.Payload != nil || cfg.Data != nil && !streamed || cfg.Compression != "" && cfg.GRPC == "") {
			return nil, fmt.Errorf("%w: %s is a stateful model (sequence_batching): the run sets each request's sequence parameters itself, so it sends generated inputs (random or zero) or a data file's streams (lists of requests, a sequence each), uncompressed over REST", ErrConfig, cfg.Model)
		}
		if streamed && (!stateful || cfg.SharedMemory) {
			return nil, fmt.Errorf("%w: the data file holds streams, a stateful model's sequences, and %s is not stateful (sequence_batching) or the run uses shared memory: give a file of requests", ErrConfig, cfg.Model)
		}
		m.SetShapes(cfg.Shapes)
		m.WordLength = cfg.StringLength
		if cfg.StringData != "" {
			m.Word = &cfg.StringData
		}
		if err := m.SetRows(cfg.Model, cfg.BatchSize); err != nil {
			return nil, err
		}
		if cfg.SLO == 0 {
			cfg.SLO = m.SLO
		}
		if cfg.SLO == 0 {
			return nil, fmt.Errorf("%w: the server gives no SLO for %s (gpuletd's slo_ms in its configuration): give one (Config.SLO, gpuletd load --slo)", ErrConfig, cfg.Model)
		}
		if streamed {
			if streams, err = cfg.Data.streamPayloads(m); err != nil {
				return nil, err
			}
			cfg.Payload = streams[0][0]
			cfg.Binary = cfg.Binary || slices.ContainsFunc(slices.Concat(streams...), func(p *Payload) bool { return p.JSONLen >= 0 })
		} else if cfg.Data != nil {
			ps, err := cfg.Data.payloads(m)
			if err != nil {
				return nil, err
			}
			cfg.Payload, extra = ps[0], ps[1:]
			// Data given in bytes (base64, a folder's files) goes as
			// binary tensors, and the report says so.
			cfg.Binary = cfg.Binary || slices.ContainsFunc(ps, func(p *Payload) bool { return p.JSONLen >= 0 })
		} else if cfg.Payload == nil || cfg.SharedMemory {
			if cfg.Payload, err = newPayload(m, cfg.Binary || cfg.SharedMemory, cfg.Seed, cfg.ZeroData); err != nil {
				return nil, err
			}
			if !cfg.Binary && cfg.AutoBinary && !cfg.SharedMemory && cfg.GRPC == "" && len(cfg.Payload.Body) > AutoBinaryBytes {
				cfg.Binary = true
				if cfg.Payload, err = newPayload(m, true, cfg.Seed, cfg.ZeroData); err != nil {
					return nil, err
				}
			}
		}
		if !cfg.SharedMemory && cfg.Data == nil {
			if extra, err = distinctPayloads(m, cfg); err != nil {
				return nil, err
			}
		}
		if cfg.SharedMemory {
			var r *shmRegion
			if r, cfg.Payload, shmGRPC, err = setUpSharedMemory(ctx, ctl, cfg, m, cfg.Payload); err != nil {
				return nil, err
			}
			defer r.tearDown(context.WithoutCancel(ctx), ctl)
		}
	}
	params := cfg.requestParameters()
	payloads := withParams(append([]*Payload{cfg.Payload}, extra...), params)
	if cfg.Compression != "" && cfg.GRPC == "" {
		for i, p := range payloads {
			if payloads[i], err = p.compressed(cfg.Compression); err != nil {
				return nil, err
			}
		}
	}
	g := &generator{
		cfg: cfg, client: client, payloads: payloads,
		infer: cfg.URL + ModelPath(cfg.Model, cfg.ModelVersion) + "/infer",
		jobs:  make(chan job, cfg.Concurrency),
	}
	g.exportLeft.Store(MaxExported)
	if stateful {
		g.seqs = newSequencePool(cfg, streamLengths(streams))
	}
	if cfg.GRPC != "" {
		if shmGRPC != nil {
			g.grpcReqs = []*pb.ModelInferRequest{shmGRPC}
		}
		for _, p := range g.payloads[len(g.grpcReqs):] {
			req, err := cfg.grpcRequest(p)
			if err != nil {
				return nil, err
			}
			g.grpcReqs = append(g.grpcReqs, req)
		}
		for _, req := range g.grpcReqs {
			addGRPCParameters(req, params)
		}
		g.grpc = grpcClient
		if cfg.Compression != "" {
			g.grpcOpts = []grpc.CallOption{grpc.UseCompressor(cfg.Compression)}
		}
		if cfg.Streaming {
			var err error
			if g.stream, err = openStream(ctx, grpcClient, g.grpcOpts...); err != nil {
				return nil, err
			}
			defer g.stream.close() // before the connection closes
		}
	}
	if err := g.useStreams(streams, params); err != nil {
		return nil, err
	}
	return g.run(ctx)
}

// grpcLive asks the server whether it is live before the run, so that an
// address where nothing listens is one error, not a run of failures. Any
// answer, an error status included (a bare echo server does not implement
// ServerLive), is a server that answers.
func grpcLive(ctx context.Context, c pb.GRPCInferenceServiceClient) error {
	ctx, cancel := context.WithTimeout(ctx, liveTimeout)
	defer cancel()
	_, err := c.ServerLive(ctx, &pb.ServerLiveRequest{})
	if code := status.Code(err); code == codes.Unavailable || code == codes.DeadlineExceeded {
		return err
	}
	return nil
}

// DialGRPC connects to the gRPC listener at addr, over TLS with tc (plain
// when nil), messages bounded by maxAnswer either way, header sent as
// every call's metadata, and asks it whether it is live: nothing answering
// there is ErrGRPCUnreachable, an address gRPC cannot take ErrConfig. The
// caller closes conn.
func DialGRPC(ctx context.Context, addr string, tc *tls.Config, header map[string]string) (*grpc.ClientConn, pb.GRPCInferenceServiceClient, error) {
	creds := insecure.NewCredentials()
	if tc != nil {
		creds = credentials.NewTLS(tc.Clone())
	}
	opts := []grpc.DialOption{grpc.WithTransportCredentials(creds),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxAnswer), grpc.MaxCallSendMsgSize(maxAnswer))}
	if len(header) > 0 {
		opts = append(opts, grpc.WithPerRPCCredentials(metadataCreds(header)))
	}
	conn, err := grpc.NewClient(addr, opts...)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: grpc address %q: %v", ErrConfig, addr, err)
	}
	client := pb.NewGRPCInferenceServiceClient(conn)
	if err := grpcLive(ctx, client); err != nil {
		_ = conn.Close()
		return nil, nil, fmt.Errorf("%w at %s: %v", ErrGRPCUnreachable, addr, err)
	}
	return conn, client, nil
}

// liveTimeout bounds grpcLive.
const liveTimeout = 5 * time.Second

// generator is one run in progress.
type generator struct {
	cfg    Config
	client *http.Client
	infer  string
	grpc   pb.GRPCInferenceServiceClient // nil: REST
	// payloads are the requests sent in turn (grpcReqs the same over
	// gRPC); next counts the requests that took one.
	payloads []*Payload
	grpcReqs []*pb.ModelInferRequest
	grpcOpts []grpc.CallOption
	// stream carries the gRPC requests when the run streams them
	// (Config.Streaming); nil: a call each.
	stream *grpcStream
	// seqs are the live sequences of a stateful model; nil for another.
	seqs *sequencePool
	// streams are a data file's streams, a sequence's requests each
	// (grpcStreams the same over gRPC); nil without them.
	streams     [][]*Payload
	grpcStreams [][]*pb.ModelInferRequest
	next        atomic.Uint64
	jobs        chan job
	inFlight    atomic.Int64
	// seg places the schedule's requests in the warm-up and the windows.
	seg *segments
	// exportLeft is how many more requests Config.Export may keep.
	exportLeft atomic.Int64
	// stableAt is the window the measurement windows agreed at, -1 when
	// they did not; checked lists what each window measured, in order
	// (Config.Windows). The checker writes both; run reads them after it.
	stableAt int
	checked  []Trial
}

func (g *generator) run(ctx context.Context) (*Report, error) {
	// reqCtx ends requests still in flight when the drain time is over or
	// ctx ends.
	reqCtx, cancelReqs := context.WithCancel(ctx)
	defer cancelReqs()
	if g.cfg.Closed {
		rep := g.newReport()
		rep.Closed = g.cfg.Concurrency
		checked := g.begin()
		err := g.closedLoop(ctx, reqCtx)
		<-checked
		g.fill(rep)
		return rep, err
	}
	var workers sync.WaitGroup
	for range g.cfg.Concurrency {
		workers.Add(1)
		go func() {
			defer workers.Done()
			for j := range g.jobs {
				g.send(reqCtx, j)
				g.inFlight.Add(-1)
				if j.t != nil {
					j.t.pending.Done()
				}
			}
		}()
	}

	rep := g.newReport()
	rep.Rate = g.cfg.Arrivals.Rate()
	checked := g.begin()
	sendErr := g.schedule(ctx)
	close(g.jobs)

	drained := make(chan struct{})
	go func() {
		workers.Wait()
		close(drained)
	}()
	timer := time.NewTimer(g.cfg.Drain)
	defer timer.Stop()
	select {
	case <-drained:
	case <-timer.C:
		cancelReqs()
		<-drained
	case <-ctx.Done():
		<-drained
	}
	<-checked
	g.fill(rep)
	return rep, sendErr
}

// begin starts the schedule now: its segments, and the check of its
// windows, which closes the channel returned when done.
func (g *generator) begin() <-chan struct{} {
	g.seg = newSegments(g.cfg, time.Now(), newTally)
	g.stableAt = -1
	checked := make(chan struct{})
	go func() {
		defer close(checked)
		g.check()
	}()
	return checked
}

// check measures each window as it closes and its requests are answered,
// when the run measures in windows (Config.Windows), and stops the
// schedule once the last windows agree. It returns when the schedule has
// ended and its last window is measured.
func (g *generator) check() {
	w := g.cfg.Windows
	k := -1 // the window closed, as they close in order
	for t := range g.seg.closed {
		k++
		if w == nil || g.stableAt >= 0 {
			continue // one window, or they agreed: the rest go unmeasured
		}
		t.pending.Wait()
		g.checked = append(g.checked, t.trial(w.Percentile))
		if agree(g.checked, w.Stability) {
			g.stableAt = k
			g.seg.stopped.Store(true)
		}
	}
}

// newReport starts the run's report.
func (g *generator) newReport() *Report {
	size := len(g.payloads[0].Body)
	if len(g.grpcReqs) > 0 {
		size = proto.Size(g.grpcReqs[0]) // a ModelInfer message, not the REST body it was made from
	}
	rep := &Report{Model: g.cfg.Model, ModelVersion: g.cfg.ModelVersion, URL: g.cfg.URL, GRPC: g.cfg.GRPC, SharedMemory: g.cfg.SharedMemory, CUDASharedMemory: g.cfg.CUDASharedMemory, Binary: g.cfg.Binary, Compression: g.cfg.Compression, Priority: g.cfg.Priority, Parameters: parameterMap(g.cfg.Parameters), BatchSize: batchSizeOf(g.cfg), Streaming: g.cfg.Streaming,
		SLO: g.cfg.SLO, RequestBytes: size}
	if g.seqs != nil {
		rep.Sequences, rep.SequenceLength = g.cfg.Sequences, g.cfg.SequenceLength
		rep.SequenceLengthVariation, rep.SequenceIDStart, rep.SequenceIDEnd = g.cfg.SequenceLengthVariation, g.cfg.SequenceIDStart, g.cfg.SequenceIDEnd
	}
	return rep
}

// closedLoop runs Concurrency senders, each sending its next request as
// soon as its last is answered, until the window ends (or ctx does:
// requests in flight then end with reqCtx). A request is due when it
// leaves, so none is dropped and the schedule lag is nil.
func (g *generator) closedLoop(ctx, reqCtx context.Context) error {
	var mu sync.Mutex // guards g.seg and the windows' schedule counts, which every sender writes
	var senders sync.WaitGroup
	for range g.cfg.Concurrency {
		senders.Add(1)
		go func() {
			defer senders.Done()
			for ctx.Err() == nil {
				mu.Lock()
				at := time.Now()
				if g.seg.over(at) {
					mu.Unlock()
					return // the window is over: the others stop too
				}
				j := job{at: at}
				if j.t, j.second = g.seg.place(at); j.t != nil {
					j.t.sent++
					j.t.maxInFlight = max(j.t.maxInFlight, g.inFlight.Add(1))
					j.t.pending.Add(1)
				} else {
					g.inFlight.Add(1)
				}
				mu.Unlock()
				g.send(reqCtx, j)
				g.inFlight.Add(-1)
				if j.t != nil {
					j.t.pending.Done()
				}
			}
		}()
	}
	senders.Wait()
	g.seg.finish(time.Now(), ctx.Err() != nil)
	return ctx.Err()
}

// schedule hands requests to the workers at the moments the arrival process
// draws, never waiting for a worker: a request due while Concurrency are in
// flight is dropped. It returns when the schedule ends, or early with ctx's
// error. Its timer (internal/hrtimer) fires within tens of microseconds:
// the runtime's, late by 0.7–0.9 ms at 400 req/s, sent each request that
// much late and bunched arrivals into the millisecond ticks it woke at.
func (g *generator) schedule(ctx context.Context) error {
	timer := hrtimer.NewTimer()
	defer func() { _ = timer.Close() }() // a timerfd's close fails only on a bad descriptor
	limit := int64(g.cfg.Concurrency)
	for at := g.seg.begin.Add(g.cfg.Arrivals.Next()); !g.seg.over(at); at = at.Add(g.cfg.Arrivals.Next()) {
		if wait := time.Until(at); wait > 0 {
			timer.Reset(wait)
			select {
			case <-timer.C:
			case <-ctx.Done():
				g.seg.finish(time.Now(), true)
				return ctx.Err()
			}
		} else if ctx.Err() != nil {
			g.seg.finish(time.Now(), true)
			return ctx.Err()
		}
		if g.seg.over(at) {
			break // the windows agreed while this one was waited for
		}
		t, second := g.seg.place(at)
		if g.inFlight.Load() >= limit {
			if t != nil {
				t.dropped++
				t.due[second].Dropped++
			}
			continue
		}
		n := g.inFlight.Add(1) // only this goroutine adds: n ≤ limit, so the send cannot block
		if t != nil {
			t.sent++
			t.maxInFlight = max(t.maxInFlight, n) // under no lock: only this goroutine writes it
			t.pending.Add(1)
		}
		g.jobs <- job{at: at, t: t, second: second}
	}
	g.seg.finish(time.Now(), false)
	return nil
}

// turn picks which of n requests the next one sends.
func (g *generator) turn(n int) int {
	if n == 1 {
		return 0
	}
	return int((g.next.Add(1) - 1) % uint64(n))
}

// distinctPayloads builds the requests after cfg.Payload that cfg.Inputs
// asks for, in cfg.Payload's form, each from its own seed.
func distinctPayloads(m *Model, cfg Config) ([]*Payload, error) {
	var out []*Payload
	for i := 1; i < cfg.Inputs; i++ {
		p, err := newPayload(m, cfg.Payload.JSONLen >= 0, cfg.Seed+uint64(i), cfg.ZeroData)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// send carries one request and records its outcome; a stateful model's
// goes in a sequence of its own first.
func (g *generator) send(ctx context.Context, j job) {
	ctx, cancel := context.WithTimeout(ctx, g.cfg.Timeout)
	defer cancel()
	if g.seqs == nil {
		g.sendOne(ctx, j, nil)
		return
	}
	s, err := g.seqs.take(ctx)
	if err != nil {
		g.fail(j, FailCancelled, "no sequence free: "+err.Error())
		return
	}
	j.seq = s.id
	g.seqs.give(s, g.sendOne(ctx, j, s))
}

// sendOne carries one request, in sequence s unless nil, and records its
// outcome; it reports whether it was answered.
func (g *generator) sendOne(ctx context.Context, j job, s *seqSlot) bool {
	if g.grpc != nil {
		return g.sendGRPC(ctx, j, s)
	}
	p := g.payloads[g.turn(len(g.payloads))]
	if s != nil {
		if g.streams != nil {
			p = g.streams[s.stream][s.step]
		}
		start, end := g.seqs.flags(s)
		p = p.withSequence(s.id, start, end)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, g.infer, bytes.NewReader(p.Body))
	if err != nil {
		g.fail(j, FailError, err.Error())
		return false
	}
	p.header(req.Header)
	sent := g.leave(j)
	resp, err := g.client.Do(req)
	if err != nil {
		if runCancelled(ctx) {
			g.fail(j, FailCancelled, transportError(err))
		} else {
			g.fail(j, FailError, transportError(err))
		}
		return false
	}
	var errBody bytes.Buffer
	sink := io.Discard
	if resp.StatusCode != g.cfg.OKStatus {
		sink = &limitedWriter{w: &errBody, n: 1 << 10}
	}
	n, err := readAnswer(sink, resp)
	resp.Body.Close()
	lat := time.Since(sent)
	if err != nil {
		g.fail(j, FailError, fmt.Sprintf("read answer: %v", err))
		return false
	}
	if resp.StatusCode != g.cfg.OKStatus {
		key := strconv.Itoa(resp.StatusCode)
		if why := resp.Header.Get(kserve.HeaderFailureReason); why != "" {
			key += " " + why // gpuletd's reason: "503 deadline", "503 dropped"
		}
		// "503: lenet5: …", the code without its text: a report's line has
		// room for the daemon's reason then.
		g.fail(j, key, strconv.Itoa(resp.StatusCode)+errorMessage(errBody.Bytes()))
		return false
	}
	g.answered(j, lat, n)
	return true
}

// sendGRPC carries one request over gRPC, in sequence s unless nil; a
// failure counts under its status code's name.
func (g *generator) sendGRPC(ctx context.Context, j job, s *seqSlot) bool {
	r := g.grpcReqs[g.turn(len(g.grpcReqs))]
	if s != nil {
		if g.grpcStreams != nil {
			r = g.grpcStreams[s.stream][s.step]
		}
		start, end := g.seqs.flags(s)
		r = grpcWithSequence(r, s.id, start, end)
	}
	sent := g.leave(j)
	if g.stream != nil {
		return g.sendStreamed(ctx, j, r, sent)
	}
	res, err := g.grpc.ModelInfer(ctx, r, g.grpcOpts...)
	lat := time.Since(sent)
	if err != nil {
		if runCancelled(ctx) {
			g.fail(j, FailCancelled, err.Error())
			return false
		}
		st := status.Convert(err)
		g.fail(j, grpcFailure(st), st.Message())
		return false
	}
	g.answered(j, lat, int64(proto.Size(res)))
	return true
}

// runCancelled says whether a request's context, ctx, ended with the run
// (cancelled, or past its drain) rather than at its own timeout: what it
// failed of counts as FailCancelled.
func runCancelled(ctx context.Context) bool {
	return ctx.Err() != nil && !errors.Is(ctx.Err(), context.DeadlineExceeded)
}

// sendStreamed carries request r, sent at sent, on the run's stream.
func (g *generator) sendStreamed(ctx context.Context, j job, r *pb.ModelInferRequest, sent time.Time) bool {
	res, err := g.stream.infer(ctx, r)
	lat := time.Since(sent)
	switch {
	case err != nil && runCancelled(ctx):
		g.fail(j, FailCancelled, err.Error())
		return false
	case err != nil:
		g.fail(j, FailError, err.Error())
		return false
	case res.ErrorMessage != "":
		key, msg := streamFailure(res)
		g.fail(j, key, msg)
		return false
	}
	g.answered(j, lat, int64(proto.Size(res)))
	return true
}

// transportError is the message of a request that got no answer: the cause
// alone ("dial tcp 127.0.0.1:8700: connect: connection refused"), without the
// method and URL every request of the run shares, which the report names once
// and which would push the cause past what a report line shows.
func transportError(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) && ue.Err != nil {
		return ue.Err.Error()
	}
	return err.Error()
}

// leave notes that j's request leaves now, how late against its schedule,
// and returns the moment.
func (g *generator) leave(j job) time.Time {
	sent := time.Now()
	if t := j.t; t != nil {
		t.mu.Lock()
		record(t.lag, sent.Sub(j.at))
		t.mu.Unlock()
	}
	return sent
}

// answered records an answer of n bytes that took lat.
func (g *generator) answered(j job, lat time.Duration, n int64) {
	t := j.t
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.ok++
	t.respBytes += n
	record(t.latency, lat)
	if g.cfg.Export {
		now := time.Now()
		g.export(t, ExportedRequest{Sent: now.Add(-lat), Answered: now, SequenceID: j.seq})
	}
	sec := t.second(j.second)
	sec.OK++
	if lat <= g.cfg.SLO {
		t.within++
		sec.Within++
	}
}

func (g *generator) fail(j job, key, msg string) {
	t := j.t
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.failed[key]++
	t.second(j.second).Failed++
	if g.cfg.Export {
		g.export(t, ExportedRequest{Sent: j.at, SequenceID: j.seq, Failed: key})
	}
	if t.firstError == "" {
		t.firstError = msg
	}
}

// fill completes the report once every worker is done, from the windows
// it counts (reported).
func (g *generator) fill(rep *Report) {
	ws := g.reported()
	t := mergeTallies(ws)
	rep.Window = t.end.Sub(t.start)
	if g.cfg.Export {
		rep.Exported, rep.ExportTruncated = t.exported, t.exportCut
		for _, w := range ws {
			rep.Boundaries = append(rep.Boundaries, w.start)
		}
		rep.Boundaries = append(rep.Boundaries, ws[len(ws)-1].end)
	}
	rep.Scheduled, rep.Sent, rep.Dropped = t.scheduled, t.sent, t.dropped
	rep.OK, rep.WithinSLO, rep.Failed, rep.FirstError = t.ok, t.within, t.failed, t.firstError
	rep.MaxInFlight = t.maxInFlight
	rep.Seconds = t.seconds
	rep.Latency, rep.Lag = summarize(t.latency), summarize(t.lag)
	if g.cfg.Windows != nil {
		stable := g.stableAt >= 0
		rep.Windows, rep.Trials, rep.Stable = g.cfg.Windows, g.checked, &stable
	}
	if w := rep.Window.Seconds(); w > 0 {
		rep.Goodput = float64(rep.WithinSLO) / w
		rep.SendRate = float64(rep.Sent) / w
	}
	if rep.Sent > 0 {
		rep.Attainment = float64(rep.WithinSLO) / float64(rep.Sent)
	}
	if t.ok > 0 {
		rep.ResponseBytes = float64(t.respBytes) / float64(t.ok)
	}
}

// limitedWriter keeps the first n bytes written and discards the rest.
type limitedWriter struct {
	w io.Writer
	n int
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	if keep := min(len(p), l.n); keep > 0 {
		l.n -= keep
		if _, err := l.w.Write(p[:keep]); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// errorMessage is ": " and the {"error": …} of an error answer, or "".
func errorMessage(body []byte) string {
	var e kserve.ErrorResponse
	if json.Unmarshal(body, &e) != nil || e.Error == "" {
		return ""
	}
	return ": " + e.Error
}

// batchSizeOf is the rows of cfg's requests for its report: 0 for one.
func batchSizeOf(cfg Config) int {
	if cfg.BatchSize > 1 {
		return cfg.BatchSize
	}
	return 0
}
