package daemon

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/gpulet/gpuletd/daemon/repository"
	"github.com/gpulet/gpuletd/executor/tensor"
	"github.com/gpulet/gpuletd/kserve"
)

// sequences keeps the live sequences of stateful models (sequence_batching):
// the state tensors each carries from one request to the next, and a turn
// that runs a sequence's requests one at a time, in the order they come.
// The state lives here, not in an executor, so any gpu-let of the model
// runs any request of any sequence, and the requests of different
// sequences batch together there.
type sequences struct {
	mu      sync.Mutex
	byModel map[string]*modelSequences
}

// modelSequences are one load's live sequences; a model loaded again
// starts with none (its state may not fit the new file).
type modelSequences struct {
	m     *repository.Model
	live  map[sequenceKey]*sequence
	swept time.Time
}

type sequenceKey struct {
	id      string
	numeric bool
}

// sequence is one live sequence.
type sequence struct {
	key sequenceKey
	// turn holds one token while a request of the sequence runs; the
	// requests waiting for it take it in the order they asked (a channel's
	// senders are served first come, first served).
	turn chan struct{}
	// state is each configured state's last value (Sequence.States'
	// order); nil before the sequence's first answer.
	state []tensor.Tensor
	used  time.Time // when its last request began or ended
	busy  int       // requests holding or waiting for its turn
	ended bool      // a request with sequence_end ran
}

// seqTurn is a request's hold on its sequence's turn.
type seqTurn struct {
	tab *modelSequences
	s   *sequence
	end bool
}

// begin finds or starts the sequence req names and waits, until deadline,
// for its turn.
func (q *sequences) begin(ctx context.Context, m *repository.Model, ref kserve.SequenceRef, deadline, now time.Time) (*seqTurn, *inferError) {
	conf := m.Config.Sequence
	if !ref.Given() {
		return nil, badRequest("%s: a stateful model (sequence_batching): give the request's sequence with the parameter sequence_id (a non-zero number or a non-empty string), and sequence_start on its first request", m.Name)
	}
	key := sequenceKey{ref.ID, ref.Numeric}
	q.mu.Lock()
	tab := q.table(m)
	tab.sweep(conf.Idle, now)
	s := tab.live[key]
	switch {
	case ref.Start:
		if s == nil && len(tab.live) >= conf.MaxSequences {
			q.mu.Unlock()
			return nil, &inferError{code: http.StatusServiceUnavailable, reason: reasonQueueFull,
				msg: fmt.Sprintf("%s: %d sequences are live, the most the model keeps (sequence_batching.oldest.max_candidate_sequences, or gpuletd's bound): end one with sequence_end, or let one idle past %v",
					m.Name, len(tab.live), conf.Idle)}
		}
		// A start begins the sequence again: a request of the old one
		// still waiting keeps the old one.
		s = &sequence{key: key, turn: make(chan struct{}, 1)}
		tab.live[key] = s
	case s == nil:
		q.mu.Unlock()
		return nil, badRequest("%s: sequence %s is not live: it never started, ended (sequence_end), or went idle past %v (max_sequence_idle_microseconds); its first request sets sequence_start", m.Name, ref, conf.Idle)
	}
	s.busy++
	s.used = now
	q.mu.Unlock()
	t := &seqTurn{tab: tab, s: s, end: ref.End}
	if ierr := t.wait(ctx, m, ref, deadline); ierr != nil {
		q.release(t, false)
		return nil, ierr
	}
	q.mu.Lock()
	ended := s.ended
	q.mu.Unlock()
	if ended {
		q.done(t, nil, nil, time.Now())
		return nil, badRequest("%s: sequence %s ended (sequence_end) while this request waited for its turn", m.Name, ref)
	}
	return t, nil
}

// wait takes the sequence's turn, or fails when the deadline passes or the
// request is cancelled first.
func (t *seqTurn) wait(ctx context.Context, m *repository.Model, ref kserve.SequenceRef, deadline time.Time) *inferError {
	select {
	case t.s.turn <- struct{}{}:
		return nil
	default:
	}
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	select {
	case t.s.turn <- struct{}{}:
		return nil
	case <-timer.C:
		return &inferError{code: http.StatusServiceUnavailable, reason: reasonDeadline,
			msg: fmt.Sprintf("%s: the deadline passed while the request waited for the one before it in sequence %s", m.Name, ref)}
	case <-ctx.Done():
		return &inferError{code: http.StatusServiceUnavailable, reason: reasonCancelled, msg: fmt.Sprintf("%s: %v", m.Name, ctx.Err())}
	}
}

// table is m's live sequences, a fresh table for a new load of m.
func (q *sequences) table(m *repository.Model) *modelSequences {
	if q.byModel == nil {
		q.byModel = map[string]*modelSequences{}
	}
	tab := q.byModel[m.Name]
	if tab == nil || tab.m != m {
		tab = &modelSequences{m: m, live: map[sequenceKey]*sequence{}}
		q.byModel[m.Name] = tab
	}
	return tab
}

// sweep ends the sequences idle past idle, at most twice an idle time.
func (tab *modelSequences) sweep(idle time.Duration, now time.Time) {
	if now.Sub(tab.swept) < idle/2 {
		return
	}
	tab.swept = now
	for k, s := range tab.live {
		if s.busy == 0 && now.Sub(s.used) > idle {
			delete(tab.live, k)
		}
	}
}

// done ends a request's turn: on an answer (outs) it keeps the state
// outputs in outs as the sequence's state, and an answered request with
// sequence_end ends the sequence. A failed one leaves the sequence as it
// was, so that the client may send it again.
func (q *sequences) done(t *seqTurn, conf *repository.Sequence, outs []tensor.Tensor, now time.Time) {
	q.mu.Lock()
	if outs != nil {
		t.s.state = keptState(conf, outs, t.s.state)
	}
	t.s.used = now
	if t.end && outs != nil {
		t.s.ended = true
		if t.tab.live[t.s.key] == t.s {
			delete(t.tab.live, t.s.key)
		}
	}
	q.mu.Unlock()
	q.release(t, true)
}

// release gives up a request's place in its sequence: its turn when held.
func (q *sequences) release(t *seqTurn, held bool) {
	q.mu.Lock()
	t.s.busy--
	q.mu.Unlock()
	if held {
		<-t.s.turn
	}
}

// keptState copies each state output of outs (by Sequence.States' order);
// a state the answer lacks keeps its old value.
func keptState(conf *repository.Sequence, outs []tensor.Tensor, old []tensor.Tensor) []tensor.Tensor {
	kept := make([]tensor.Tensor, len(conf.States))
	for i, st := range conf.States {
		if i < len(old) {
			kept[i] = old[i]
		}
		for _, o := range outs {
			if o.Name == st.Output {
				kept[i] = tensor.Tensor{Name: st.Input, DataType: o.DataType, Shape: o.Shape, Data: append([]byte(nil), o.Data...)}
			}
		}
	}
	return kept
}

// live counts the live sequences of m (those idle past their time are
// not counted); 0 for a load of m other than the one they began on. It
// also ends those long idle, so that a model whose traffic stopped gives
// their state back at the next scrape or status.
func (q *sequences) live(m *repository.Model, now time.Time) int {
	q.mu.Lock()
	defer q.mu.Unlock()
	tab := q.byModel[m.Name]
	if tab == nil || tab.m != m {
		return 0
	}
	tab.sweep(m.Config.Sequence.Idle, now)
	n := 0
	for _, s := range tab.live {
		if s.busy > 0 || now.Sub(s.used) <= m.Config.Sequence.Idle {
			n++
		}
	}
	return n
}

// forget drops the sequences of every version of the model folder family,
// which is unloaded.
func (q *sequences) forget(family string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for name, tab := range q.byModel {
		if tab.m.Family == family {
			delete(q.byModel, name)
		}
	}
}
