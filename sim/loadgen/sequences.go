package loadgen

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"strconv"
	"sync"

	"github.com/gpulet/gpuletd/kserve"

	pb "github.com/gpulet/gpuletd/kserve/inferencepb"
)

// Defaults of the sequences a run of a stateful model keeps, perf_analyzer's.
const (
	DefaultSequenceLength = 20
	DefaultSequences      = 4
)

// sequencePool is the sequences a run of a stateful model (one whose
// configuration has sequence_batching) keeps live, as perf_analyzer does:
// a request goes in the next free sequence, starting it on its first
// request and ending it on its length-th, and waits while every sequence
// has a request in flight, so a sequence's requests reach the server in
// order. A failed request ends its sequence's turn: the next request starts
// a new one.
type sequencePool struct {
	free chan *seqSlot
	// A sequence has length requests, or with variation above 0 a number
	// drawn evenly within that share of it either side (at least one).
	length    int
	variation float64
	// streams, when a data file gives them, are each stream's length: a
	// new sequence takes the next stream in turn (nextStream) and its
	// length, in place of length and variation.
	streams    []int
	nextStream int
	// IDs go from first, and after span of them (0: never) from first
	// again, passing over those live.
	first, span uint64
	mu          sync.Mutex // guards the rest
	next        uint64     // IDs handed out
	live        map[uint64]bool
	rng         *rand.Rand
}

// seqSlot is one live sequence: its correlation ID, how many requests it
// has and how many of them were answered, and the data stream it sends.
type seqSlot struct {
	id           uint64
	step, length int
	stream       int
}

// newSequencePool keeps cfg.Sequences sequences, their lengths and IDs as
// cfg says, or as streams, the data file's streams' lengths, say.
func newSequencePool(cfg Config, streams []int) *sequencePool {
	p := &sequencePool{free: make(chan *seqSlot, cfg.Sequences), length: cfg.SequenceLength, variation: cfg.SequenceLengthVariation, streams: streams,
		first: max(cfg.SequenceIDStart, 1), live: map[uint64]bool{}, rng: rand.New(rand.NewPCG(cfg.Seed, 0x5e9))}
	if cfg.SequenceIDEnd > 0 {
		p.span = cfg.SequenceIDEnd - p.first
	}
	for range cfg.Sequences {
		s := &seqSlot{}
		p.begin(s)
		p.free <- s
	}
	return p
}

// begin starts a new sequence in s: the next ID not live, and its length.
func (p *sequencePool) begin(s *seqSlot) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.live, s.id)
	for {
		id := p.first + p.next
		if p.span > 0 {
			id = p.first + p.next%p.span
		}
		p.next++
		if !p.live[id] { // the range holds more IDs than sequences: one is free
			s.id = id
			break
		}
	}
	p.live[s.id] = true
	s.step, s.length = 0, p.length
	switch {
	case len(p.streams) > 0:
		s.stream = p.nextStream % len(p.streams)
		s.length = p.streams[s.stream]
		p.nextStream++
	case p.variation > 0:
		lo := max(1, int(math.Round(float64(p.length)*(1-p.variation))))
		hi := max(lo, int(math.Round(float64(p.length)*(1+p.variation))))
		s.length = lo + p.rng.IntN(hi-lo+1)
	}
}

// take waits for a sequence with no request in flight.
func (p *sequencePool) take(ctx context.Context) (*seqSlot, error) {
	select {
	case s := <-p.free:
		return s, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// give hands s back once its request is answered (ok) or failed.
func (p *sequencePool) give(s *seqSlot, ok bool) {
	s.step++
	if !ok || s.step >= s.length {
		p.begin(s)
	}
	p.free <- s
}

// flags says whether s's next request starts or ends it.
func (p *sequencePool) flags(s *seqSlot) (start, end bool) {
	return s.step == 0, s.step == s.length-1
}

// withSequence is p with the sequence parameters of a request of sequence
// id set in its JSON: beside the request's other parameters, or as its
// parameters. The body is neither compressed nor changed in place.
func (pl *Payload) withSequence(id uint64, start, end bool) *Payload {
	return pl.withParameters(fmt.Sprintf(`"sequence_id":%d,"sequence_start":%t,"sequence_end":%t`, id, start, end))
}

// withParameters is p with params, JSON members, set: beside the request's
// other parameters, or as its parameters. The body is neither compressed
// nor changed in place.
func (pl *Payload) withParameters(params string) *Payload {
	var body []byte
	if prefix := []byte(`{"parameters":{`); bytes.HasPrefix(pl.Body, prefix) {
		body = append(append(append(append([]byte(nil), prefix...), params...), ','), pl.Body[len(prefix):]...)
	} else {
		body = append(append(append([]byte(`{"parameters":{`), params...), "},"...), pl.Body[1:]...)
	}
	out := &Payload{Body: body, JSONLen: pl.JSONLen, Coding: pl.Coding}
	if pl.JSONLen >= 0 {
		out.JSONLen += int64(len(body) - len(pl.Body))
	}
	return out
}

// grpcWithSequence is r with the sequence parameters set: a new message
// sharing r's inputs.
func grpcWithSequence(r *pb.ModelInferRequest, id uint64, start, end bool) *pb.ModelInferRequest {
	return GRPCWithSequence(r, kserve.SequenceRef{ID: strconv.FormatUint(id, 10), Numeric: true, Number: id, Start: start, End: end})
}

// GRPCWithSequence is r with the sequence parameters of ref set (a numeric
// ID as uint64_param, a string one as string_param): a new message sharing
// r's inputs and other parameters.
func GRPCWithSequence(r *pb.ModelInferRequest, ref kserve.SequenceRef) *pb.ModelInferRequest {
	params := maps.Clone(r.Parameters)
	if params == nil {
		params = map[string]*pb.InferParameter{}
	}
	if ref.Numeric {
		params["sequence_id"] = &pb.InferParameter{ParameterChoice: &pb.InferParameter_Uint64Param{Uint64Param: ref.Number}}
	} else if ref.ID != "" {
		params["sequence_id"] = &pb.InferParameter{ParameterChoice: &pb.InferParameter_StringParam{StringParam: ref.ID}}
	}
	params["sequence_start"] = &pb.InferParameter{ParameterChoice: &pb.InferParameter_BoolParam{BoolParam: ref.Start}}
	params["sequence_end"] = &pb.InferParameter{ParameterChoice: &pb.InferParameter_BoolParam{BoolParam: ref.End}}
	return &pb.ModelInferRequest{ModelName: r.ModelName, ModelVersion: r.ModelVersion, Id: r.Id, Parameters: params,
		Inputs: r.Inputs, Outputs: r.Outputs, RawInputContents: r.RawInputContents}
}
