package sched

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestSetLatenciesRekeysAndRejects(t *testing.T) {
	rec := newRecorder()
	s, err := New(Config{Policy: Deferred{Solo: true, HeadOnly: true}}, rec)
	require.NoError(t, err)
	lat, err := LinearLatency(time.Millisecond, 5*time.Millisecond, 8)
	require.NoError(t, err)
	require.NoError(t, s.AddModel(0, 0, ModelConfig{Latency: lat}))
	// Deadline 12 ms: alone it finishes at 6 ms, so it waits (frontrun at
	// 12 − ℓ(2) = 5 ms).
	require.NoError(t, s.Submit(0, Request{ID: 1, Deadline: 12 * time.Millisecond}))
	w, ok := s.NextWakeup()
	require.True(t, ok)
	require.Equal(t, 5*time.Millisecond, w)
	// 1.7 times slower: ℓ(1) = 10.2 ms still fits, ℓ(2) = 11.9 ms would
	// need to start by 0.1 ms, which has passed: the batch goes at once.
	require.NoError(t, s.SetLatencies(time.Millisecond, 0, lat.Scaled(1.7), 0))
	require.Len(t, rec.dispatches, 1, "the batch that can no longer grow goes at once")
	// Slower still: a new request that cannot finish alone is rejected.
	require.NoError(t, s.SetLatencies(time.Millisecond, 0, lat.Scaled(3), 0))
	require.NoError(t, s.Submit(time.Millisecond, Request{ID: 2, Deadline: 12 * time.Millisecond}))
	require.Len(t, rec.rejects, 1)
	require.ErrorIs(t, s.SetLatencies(0, 9, lat, 0), ErrUnknownModel)
	require.ErrorIs(t, s.SetLatencies(0, 0, Latency{}, 0), ErrBadLatency)
}

func TestScaled(t *testing.T) {
	lat, err := NewLatency([]LatencyPoint{{1, 1}, {4, 4}}, 1, nil, 4)
	require.NoError(t, err)
	s := lat.Scaled(1.5)
	require.Equal(t, 1500*time.Microsecond, s.At(1))
	require.Equal(t, 6*time.Millisecond, s.At(4))
	require.Equal(t, 4, s.MaxBatch())
}

func TestSubmitAllBatchesRowsUnderEager(t *testing.T) {
	rec := newRecorder()
	s, err := New(Config{Policy: Eager{}}, rec)
	require.NoError(t, err)
	lat, err := LinearLatency(time.Millisecond, 5*time.Millisecond, 8)
	require.NoError(t, err)
	require.NoError(t, s.AddModel(0, 0, ModelConfig{Latency: lat}))
	rows := []Request{{ID: 1, Deadline: 50 * time.Millisecond}, {ID: 2, Deadline: 50 * time.Millisecond}, {ID: 3, Deadline: 50 * time.Millisecond}}
	require.NoError(t, s.SubmitAll(0, rows))
	require.Len(t, rec.dispatches, 1)
	require.Len(t, rec.dispatches[0].IDs, 3, "the rows of one request run as one batch")
	// One by one, eager starts the first alone.
	rec2 := newRecorder()
	s2, _ := New(Config{Policy: Eager{}}, rec2)
	require.NoError(t, s2.AddModel(0, 0, ModelConfig{Latency: lat}))
	for _, r := range rows {
		require.NoError(t, s2.Submit(0, r))
	}
	require.Len(t, rec2.dispatches[0].IDs, 1)
	require.ErrorIs(t, s.SubmitAll(0, []Request{{ID: 9, Model: 7}}), ErrUnknownModel)
}

func TestSetLatenciesRefusesByTheAdmissionLatency(t *testing.T) {
	ms := time.Millisecond
	lat, err := LinearLatency(ms, 5*ms, 8) // ℓ(1) = 6 ms
	require.NoError(t, err)
	slow := lat.Scaled(3) // ℓ(1) = 18 ms: the pessimistic calibration
	tests := []struct {
		name     string
		policy   Policy
		admit    time.Duration
		deadline time.Duration
		rejected bool
	}{
		{"pessimistic ℓ alone refuses", Deferred{Solo: true, HeadOnly: true}, 0, 12 * ms, true},
		{"typical ℓ(1) admits and runs it at once", Deferred{Solo: true, HeadOnly: true}, 6 * ms, 12 * ms, false},
		{"with head dropping too", Deferred{}, 6 * ms, 12 * ms, false},
		{"eager", Eager{}, 6 * ms, 12 * ms, false},
		{"late even by the typical ℓ(1)", Deferred{Solo: true, HeadOnly: true}, 6 * ms, 5 * ms, true},
		{"admission above ℓ(1) is capped at it", Deferred{Solo: true, HeadOnly: true}, 30 * ms, 20 * ms, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := newRecorder()
			s, err := New(Config{Policy: tt.policy}, rec)
			require.NoError(t, err)
			require.NoError(t, s.AddModel(0, 0, ModelConfig{Latency: lat}))
			require.NoError(t, s.SetLatencies(0, 0, slow, tt.admit))
			require.NoError(t, s.Submit(0, Request{ID: 1, Deadline: tt.deadline}))
			if tt.rejected {
				require.Len(t, rec.rejects, 1)
				require.Empty(t, rec.dispatches)
				return
			}
			require.Empty(t, rec.rejects)
			require.Len(t, rec.dispatches, 1, "best effort: the request runs alone at once")
			require.Len(t, rec.dispatches[0].IDs, 1)
		})
	}
}

// TestBatchEndedCalibratesTheBatchThatEnded: every batch takes twice its
// planned time, and the next batch, of another size, always waits, so
// BatchDone starts it before the calibration is told. The calibration still
// compares each batch with its own plan: once it has seen
// CalibrationMinBatches batches the factor is exactly 2 (compared with the
// batch that had just started, every ratio would be off by 8/6 or 6/8) and, after
// the batch already started, batches are planned twice as long. A failed
// batch (nil calibration) ends without being counted; an unknown batch is
// ErrNoBatch.
func TestBatchEndedCalibratesTheBatchThatEnded(t *testing.T) {
	ms := time.Millisecond
	rec := newRecorder()
	s, err := New(Config{Policy: Eager{}}, rec)
	require.NoError(t, err)
	base, err := LinearLatency(ms, 5*ms, 4) // ℓ(1) = 6 ms, ℓ(3) = 8 ms
	require.NoError(t, err)
	require.NoError(t, s.AddModel(0, 0, ModelConfig{Latency: base}))
	id := uint64(0)
	submit := func(now time.Duration, n int) {
		for range n {
			id++
			require.NoError(t, s.Submit(now, Request{ID: id, Deadline: time.Hour}))
		}
	}
	c := NewCalibration(CalibrationMax)
	now := time.Duration(0)
	submit(now, 1) // runs at once, alone
	end := func(calib *Calibration) (Latency, bool) {
		b, ok := s.Running()
		require.True(t, ok)
		planned := b.End - b.Start
		now = b.Start + 2*planned
		lat, changed, err := s.BatchEnded(now, b.Seq, 2*planned, base, calib)
		require.NoError(t, err)
		return lat, changed
	}
	var changed bool
	for i := range CalibrationMinBatches {
		submit(now, 3-2*(i%2)) // 3 and 1 by turns: batches of 1, 3, 1, 3, …
		var lat Latency
		lat, changed = end(&c)
		if changed {
			require.Equal(t, 12*ms, lat.At(1))
		}
	}
	require.True(t, changed, "the factor moved at the %dth batch", CalibrationMinBatches)
	require.InDelta(t, 2, c.Factor(), 1e-9)
	// The batch BatchDone started keeps its plan; the one after it is
	// planned with the calibrated ℓ.
	b, ok := s.Running()
	require.True(t, ok)
	require.Equal(t, base.At(len(b.Requests)), b.End-b.Start)
	submit(now, 1)
	end(&c)
	b, ok = s.Running()
	require.True(t, ok)
	require.Equal(t, 2*base.At(len(b.Requests)), b.End-b.Start, "the next batch is planned with the calibrated ℓ")

	submit(now, 1)
	_, changed = end(nil)
	require.False(t, changed, "a failed batch is not counted")
	require.InDelta(t, 2, c.Factor(), 1e-9)
	_, _, err = s.BatchEnded(now+ms, 999, ms, base, &c)
	require.ErrorIs(t, err, ErrNoBatch)
}

// TestCalibrationIdleForgetsAfterAPause: a calibration raised to 2 stays
// while batches keep coming; a request after CalibrationForget without a
// batch resets it, and the scheduler plans with the profiled ℓ again.
func TestCalibrationIdleForgetsAfterAPause(t *testing.T) {
	ms := time.Millisecond
	s, err := New(Config{Policy: Eager{}}, newRecorder())
	require.NoError(t, err)
	base, err := LinearLatency(ms, 5*ms, 4)
	require.NoError(t, err)
	require.NoError(t, s.AddModel(0, 0, ModelConfig{Latency: base}))
	c := NewCalibration(CalibrationMax)
	now := time.Duration(0)
	for i := range CalibrationMinBatches {
		require.NoError(t, s.Submit(now, Request{ID: uint64(i + 1), Deadline: now + time.Second}))
		b, ok := s.Running()
		require.True(t, ok)
		now += 2 * (b.End - b.Start)
		_, _, err := s.BatchEnded(now, b.Seq, 2*(b.End-b.Start), base, &c)
		require.NoError(t, err)
	}
	require.InDelta(t, 2, c.Factor(), 1e-9)

	_, changed, err := s.CalibrationIdle(now+CalibrationForget, 0, base, &c)
	require.NoError(t, err)
	require.False(t, changed, "not idle long enough")
	lat, changed, err := s.CalibrationIdle(now+CalibrationForget+ms, 0, base, &c)
	require.NoError(t, err)
	require.True(t, changed)
	require.Equal(t, base.At(1), lat.At(1))
	require.InDelta(t, 1, c.Factor(), 1e-9)
	require.NoError(t, s.Submit(now+CalibrationForget+ms, Request{ID: 99, Deadline: now + time.Hour}))
	b, ok := s.Running()
	require.True(t, ok)
	require.Equal(t, base.At(1), b.End-b.Start, "planned with the profiled ℓ again")
}
