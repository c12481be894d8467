package daemon

import (
	"context"
	"encoding/binary"
	"math"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/daemon/repository"
	"github.com/gpulet/gpuletd/executor/tensor"
	"github.com/gpulet/gpuletd/kserve"
)

// statefulModel is a running sum's load: a start control and a state.
func statefulModel(idle time.Duration, most int) *repository.Model {
	return &repository.Model{Name: "sum", Family: "sum", Config: repository.ModelConfig{MaxBatchSize: 8, Sequence: &repository.Sequence{
		Idle: idle, MaxSequences: most,
		Controls: []repository.SequenceControl{{Input: "START", Kind: repository.ControlStart, DataType: tensor.FP32, False: 0, True: 1}},
		States:   []repository.SequenceState{{Input: "ACC", Output: "ACC_NEXT", DataType: tensor.FP32, Dims: []int64{1}}},
	}}}
}

func seqRef(id string, start, end bool) kserve.SequenceRef {
	return kserve.SequenceRef{ID: id, Numeric: true, Start: start, End: end}
}

func stateOut(v float32) []tensor.Tensor {
	t, _ := tensor.FromFloat32s("ACC_NEXT", []int64{1, 1}, []float32{v})
	return []tensor.Tensor{t}
}

func stateValue(t *testing.T, s *sequence) float32 {
	t.Helper()
	require.Len(t, s.state, 1)
	v, err := s.state[0].Float32s()
	require.NoError(t, err)
	return v[0]
}

func TestSequenceLifecycle(t *testing.T) {
	var q sequences
	m := statefulModel(time.Second, 2)
	now := time.Unix(1000, 0)
	far := now.Add(time.Hour)
	ctx := context.Background()

	_, ierr := q.begin(ctx, m, kserve.SequenceRef{}, far, now)
	require.NotNil(t, ierr)
	require.Equal(t, http.StatusBadRequest, ierr.code)
	require.Contains(t, ierr.msg, "give the request's sequence with the parameter sequence_id")

	_, ierr = q.begin(ctx, m, seqRef("1", false, false), far, now)
	require.NotNil(t, ierr, "a sequence is started by sequence_start")
	require.Contains(t, ierr.msg, "sequence 1 is not live")

	turn, ierr := q.begin(ctx, m, seqRef("1", true, false), far, now)
	require.Nil(t, ierr)
	require.Nil(t, turn.s.state, "a new sequence has no state yet")
	q.done(turn, m.Config.Sequence, stateOut(5), now)

	turn, ierr = q.begin(ctx, m, seqRef("1", false, false), far, now.Add(900*time.Millisecond))
	require.Nil(t, ierr)
	require.Equal(t, float32(5), stateValue(t, turn.s))
	q.done(turn, m.Config.Sequence, nil, now.Add(900*time.Millisecond)) // a failed request keeps the state
	turn, ierr = q.begin(ctx, m, seqRef("1", false, false), far, now.Add(time.Second))
	require.Nil(t, ierr)
	require.Equal(t, float32(5), stateValue(t, turn.s))
	q.done(turn, m.Config.Sequence, stateOut(7), now.Add(time.Second))
	require.Equal(t, 1, q.live(m, now.Add(time.Second)))

	// A second sequence fills the bound of 2; a third is refused until
	// one ends or idles out.
	two, ierr := q.begin(ctx, m, seqRef("2", true, false), far, now.Add(time.Second))
	require.Nil(t, ierr)
	q.done(two, m.Config.Sequence, stateOut(1), now.Add(time.Second))
	_, ierr = q.begin(ctx, m, seqRef("3", true, false), far, now.Add(time.Second))
	require.NotNil(t, ierr)
	require.Equal(t, reasonQueueFull, ierr.reason)
	require.Contains(t, ierr.msg, "2 sequences are live")

	// Sequence 2 ends (its end failed once, and was sent again); sequence
	// 1 idles past its second.
	two, ierr = q.begin(ctx, m, seqRef("2", false, true), far, now.Add(time.Second))
	require.Nil(t, ierr)
	q.done(two, m.Config.Sequence, nil, now.Add(time.Second))
	two, ierr = q.begin(ctx, m, seqRef("2", false, true), far, now.Add(time.Second))
	require.Nil(t, ierr, "a failed end leaves the sequence live")
	require.Equal(t, float32(1), stateValue(t, two.s))
	q.done(two, m.Config.Sequence, stateOut(2), now.Add(time.Second))
	_, ierr = q.begin(ctx, m, seqRef("2", false, false), far, now.Add(time.Second))
	require.NotNil(t, ierr, "an ended sequence is not live")
	require.Equal(t, 1, q.live(m, now.Add(2*time.Second)))
	require.Equal(t, 0, q.live(m, now.Add(2100*time.Millisecond)))
	require.Equal(t, 0, q.live(m, now.Add(2600*time.Millisecond)))
	require.Empty(t, q.byModel["sum"].live, "counting ends the sequences long idle (at most twice an idle time)")
	_, ierr = q.begin(ctx, m, seqRef("1", false, false), far, now.Add(2100*time.Millisecond))
	require.NotNil(t, ierr, "an idle sequence is ended")
	require.Contains(t, ierr.msg, "went idle past 1s")

	// A start of a live sequence begins it again.
	one, ierr := q.begin(ctx, m, seqRef("1", true, false), far, now.Add(3*time.Second))
	require.Nil(t, ierr)
	q.done(one, m.Config.Sequence, stateOut(3), now.Add(3*time.Second))
	one, ierr = q.begin(ctx, m, seqRef("1", true, false), far, now.Add(3*time.Second))
	require.Nil(t, ierr)
	require.Nil(t, one.s.state)
	q.done(one, m.Config.Sequence, stateOut(4), now.Add(3*time.Second))

	// A new load of the model starts with no sequences; unloading forgets them.
	again := statefulModel(time.Second, 2)
	require.Equal(t, 0, q.live(again, now.Add(3*time.Second)))
	_, ierr = q.begin(ctx, again, seqRef("1", false, false), far, now.Add(3*time.Second))
	require.NotNil(t, ierr)
	q.forget("sum")
	require.Empty(t, q.byModel)
}

func TestSequenceRequestsRunInTurn(t *testing.T) {
	var q sequences
	m := statefulModel(time.Minute, 10)
	ctx := context.Background()
	far := time.Now().Add(time.Minute)
	first, ierr := q.begin(ctx, m, seqRef("1", true, false), far, time.Now())
	require.Nil(t, ierr)

	// Requests behind the first wait for it, then run one at a time in
	// the order they came; each sees the state the one before kept.
	const n = 5
	var mu sync.Mutex
	var seen []float32
	errs := make(chan *inferError, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			turn, ierr := q.begin(ctx, m, seqRef("1", false, false), far, time.Now())
			if ierr != nil {
				errs <- ierr
				return
			}
			v, _ := turn.s.state[0].Float32s()
			mu.Lock()
			seen = append(seen, v[0])
			mu.Unlock()
			q.done(turn, m.Config.Sequence, stateOut(v[0]+1), time.Now())
		}()
		// The next asks once this one waits (in order).
		require.Eventually(t, func() bool {
			q.mu.Lock()
			defer q.mu.Unlock()
			return first.s.busy == i+2
		}, 5*time.Second, time.Millisecond)
	}
	q.done(first, m.Config.Sequence, stateOut(10), time.Now())
	wg.Wait()
	close(errs)
	for ierr := range errs {
		require.Nil(t, ierr)
	}
	require.Equal(t, []float32{10, 11, 12, 13, 14}, seen)
}

func TestSequenceWaitEnds(t *testing.T) {
	var q sequences
	m := statefulModel(time.Minute, 10)
	far := time.Now().Add(time.Minute)
	first, ierr := q.begin(context.Background(), m, seqRef("1", true, false), far, time.Now())
	require.Nil(t, ierr)

	_, ierr = q.begin(context.Background(), m, seqRef("1", false, false), time.Now().Add(20*time.Millisecond), time.Now())
	require.NotNil(t, ierr)
	require.Equal(t, reasonDeadline, ierr.reason)
	require.Contains(t, ierr.msg, "waited for the one before it in sequence 1")

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, ierr = q.begin(ctx, m, seqRef("1", false, false), far, time.Now())
	require.NotNil(t, ierr)
	require.Equal(t, reasonCancelled, ierr.reason)

	// A request waiting behind the sequence's end is refused once it ends.
	done := make(chan *inferError, 1)
	go func() {
		_, ierr := q.begin(context.Background(), m, seqRef("1", false, false), far, time.Now())
		done <- ierr
	}()
	require.Eventually(t, func() bool {
		q.mu.Lock()
		defer q.mu.Unlock()
		return first.s.busy == 2
	}, 5*time.Second, time.Millisecond)
	first.end = true
	q.done(first, m.Config.Sequence, stateOut(1), time.Now())
	ierr = <-done
	require.NotNil(t, ierr)
	require.Contains(t, ierr.msg, "ended (sequence_end) while this request waited")
	require.Equal(t, 0, q.live(m, time.Now()))
	q.mu.Lock()
	require.Zero(t, first.s.busy, "no request holds the ended sequence")
	q.mu.Unlock()
}

func TestSequenceInputs(t *testing.T) {
	m := statefulModel(time.Second, 10)
	m.Config.Sequence.Controls = []repository.SequenceControl{
		{Input: "START", Kind: repository.ControlStart, DataType: tensor.Int32, False: 0, True: 1},
		{Input: "END", Kind: repository.ControlEnd, DataType: tensor.Bool, False: 0, True: 1},
		{Input: "READY", Kind: repository.ControlReady, DataType: tensor.FP32, False: -1, True: 2},
		{Input: "ID32", Kind: repository.ControlCorrID, DataType: tensor.Uint32},
		{Input: "ID64", Kind: repository.ControlCorrID, DataType: tensor.Int64},
		{Input: "IDS", Kind: repository.ControlCorrID, DataType: tensor.Bytes},
	}
	m.Config.Sequence.States = append(m.Config.Sequence.States,
		repository.SequenceState{Input: "INIT", Output: "INIT_NEXT", DataType: tensor.FP32, Dims: []int64{1}, Initial: binary.LittleEndian.AppendUint32(nil, math.Float32bits(9))})
	x, err := tensor.FromFloat32s("INPUT", []int64{1, 4}, []float32{1, 2, 3, 4})
	require.NoError(t, err)
	ref := kserve.SequenceRef{ID: "4294967301", Numeric: true, Number: 1<<32 + 5, Start: true}

	ins, err := sequenceInputs(m, ref, nil, []tensor.Tensor{x})
	require.NoError(t, err)
	byName := map[string]tensor.Tensor{}
	for _, in := range ins {
		byName[in.Name] = in
		require.NoError(t, in.Check(), in.Name)
	}
	require.Equal(t, x, byName["INPUT"])
	require.Equal(t, []int64{1, 1}, byName["START"].Shape, "one row of one value")
	require.Equal(t, binary.LittleEndian.AppendUint32(nil, 1), byName["START"].Data)
	require.Equal(t, []byte{0}, byName["END"].Data)
	require.Equal(t, binary.LittleEndian.AppendUint32(nil, math.Float32bits(2)), byName["READY"].Data)
	require.Equal(t, binary.LittleEndian.AppendUint32(nil, 5), byName["ID32"].Data, "a 32-bit ID keeps the low bits")
	require.Equal(t, binary.LittleEndian.AppendUint64(nil, 1<<32+5), byName["ID64"].Data)
	require.Equal(t, tensor.AppendBytesElement(nil, []byte("4294967301")), byName["IDS"].Data, "a string ID input takes a number's digits")
	str, err := sequenceInputs(m, kserve.SequenceRef{ID: "call-7"}, nil, []tensor.Tensor{x})
	require.NoError(t, err)
	require.Equal(t, tensor.AppendBytesElement(nil, []byte("call-7")), str[len(str)-3].Data, "and a string ID as it is")
	require.Equal(t, make([]byte, 4), byName["ACC"].Data, "a state without initial_state starts at zeros")
	require.Equal(t, []int64{1, 1}, byName["ACC"].Shape)
	require.Equal(t, binary.LittleEndian.AppendUint32(nil, math.Float32bits(9)), byName["INIT"].Data)

	// Later: the kept state; a model that does not batch has no row dimension.
	m.Config.MaxBatchSize = 0
	ref.Start, ref.End = false, true
	kept := keptState(m.Config.Sequence, append(stateOut(6), tensor.Tensor{Name: "other"}), nil)
	ins, err = sequenceInputs(m, ref, kept, []tensor.Tensor{x})
	require.NoError(t, err)
	for _, in := range ins {
		byName[in.Name] = in
	}
	require.Equal(t, []int64{1}, byName["START"].Shape)
	require.Equal(t, binary.LittleEndian.AppendUint32(nil, 0), byName["START"].Data)
	require.Equal(t, []byte{1}, byName["END"].Data)
	require.Equal(t, binary.LittleEndian.AppendUint32(nil, math.Float32bits(6)), byName["ACC"].Data)
	require.Equal(t, binary.LittleEndian.AppendUint32(nil, math.Float32bits(9)), byName["INIT"].Data, "a state the answer lacks keeps its value")

	outs := withoutState(m, append(stateOut(1), x))
	require.Equal(t, []tensor.Tensor{x}, outs)
}

// BenchmarkSequenceRequest is what the daemon adds to a request of a
// stateful model: its turn, its control and state inputs, and keeping its
// state.
func BenchmarkSequenceRequest(b *testing.B) {
	var q sequences
	m := statefulModel(time.Minute, 4096)
	ctx := context.Background()
	far := time.Now().Add(time.Hour)
	x, err := tensor.FromFloat32s("INPUT", []int64{1, 4}, []float32{1, 2, 3, 4})
	require.NoError(b, err)
	out := stateOut(1)
	turn, ierr := q.begin(ctx, m, seqRef("1", true, false), far, time.Now())
	require.Nil(b, ierr)
	q.done(turn, m.Config.Sequence, out, time.Now())
	b.ReportAllocs()
	for b.Loop() {
		turn, ierr := q.begin(ctx, m, seqRef("1", false, false), far, time.Now())
		if ierr != nil {
			b.Fatal(ierr.msg)
		}
		if _, err := sequenceInputs(m, seqRef("1", false, false), turn.s.state, []tensor.Tensor{x}); err != nil {
			b.Fatal(err)
		}
		q.done(turn, m.Config.Sequence, out, time.Now())
	}
}
