package hrtimer

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// received is what C holds within wait, or the zero time.
func received(t *Timer, wait time.Duration) time.Time {
	select {
	case at := <-t.C:
		return at
	case <-time.After(wait):
		return time.Time{}
	}
}

func TestTimerFiresAfterItsDuration(t *testing.T) {
	for _, d := range []time.Duration{time.Microsecond, 300 * time.Microsecond, 3 * time.Millisecond} {
		tm := NewTimer()
		start := time.Now()
		tm.Reset(d)
		at := received(tm, 5*time.Second)
		require.False(t, at.IsZero(), "fired within 5 s for %v", d)
		require.GreaterOrEqual(t, at.Sub(start), d, "never early")
		require.NoError(t, tm.Close())
	}
}

func TestTimerResetAndStopDropEarlierArmings(t *testing.T) {
	tests := []struct {
		name string
		do   func(t *testing.T, tm *Timer)
		// fires: whether the timer fires after do, within 200 ms; if
		// notBefore is set, not before it has passed since.
		fires     bool
		notBefore time.Duration
	}{
		{name: "stopped before it fired", do: func(_ *testing.T, tm *Timer) { tm.Reset(20 * time.Millisecond); tm.Stop() }},
		{name: "stopped after it fired, not received", do: func(_ *testing.T, tm *Timer) {
			tm.Reset(time.Microsecond)
			time.Sleep(20 * time.Millisecond)
			tm.Stop()
		}},
		{name: "reset later after it fired, not received: the later one only", fires: true, notBefore: 40 * time.Millisecond, do: func(_ *testing.T, tm *Timer) {
			tm.Reset(time.Microsecond)
			time.Sleep(20 * time.Millisecond)
			tm.Reset(50 * time.Millisecond)
		}},
		{name: "reset to now", fires: true, do: func(_ *testing.T, tm *Timer) { tm.Reset(time.Hour); tm.Reset(0) }},
		{name: "never armed", do: func(*testing.T, *Timer) {}},
		{name: "closed while armed", do: func(t *testing.T, tm *Timer) { tm.Reset(time.Millisecond); require.NoError(t, tm.Close()) }},
		{name: "reset after close", do: func(t *testing.T, tm *Timer) { require.NoError(t, tm.Close()); tm.Reset(time.Millisecond) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tm := NewTimer()
			defer func() { require.NoError(t, tm.Close()) }()
			tt.do(t, tm)
			armed := time.Now()
			at := received(tm, 200*time.Millisecond)
			require.Equal(t, tt.fires, !at.IsZero(), "fired")
			if tt.notBefore > 0 {
				require.GreaterOrEqual(t, at.Sub(armed), tt.notBefore, "the last arming's time, not an earlier one's")
			}
			require.True(t, received(tm, 30*time.Millisecond).IsZero(), "fires once")
		})
	}
}

// TestTimerFallsBackWhenItsFileFails: a timer whose kernel timer fails
// fires on the runtime's, armed before the failure or after.
func TestTimerFallsBackWhenItsFileFails(t *testing.T) {
	for _, armedFirst := range []bool{true, false} {
		f := &failingClock{fail: make(chan struct{})}
		c := make(chan time.Time, 1)
		tm := &Timer{C: c, c: c, clock: f, done: make(chan struct{})}
		go tm.read(f)
		if armedFirst {
			tm.Reset(10 * time.Millisecond)
		}
		close(f.fail)
		<-tm.done
		if !armedFirst {
			tm.Reset(10 * time.Millisecond)
		}
		require.False(t, received(tm, 5*time.Second).IsZero(), "fired, armed first: %v", armedFirst)
		require.NoError(t, tm.Close())
	}
}

// failingClock never expires; its wait fails once fail is closed.
type failingClock struct{ fail chan struct{} }

func (f *failingClock) set(time.Duration) error { return nil }
func (f *failingClock) wait() error {
	<-f.fail
	return errors.New("read timerfd: input/output error")
}
func (f *failingClock) interrupt()   {}
func (f *failingClock) close() error { return nil }

func TestSleep(t *testing.T) {
	why := errors.New("told to stop")
	ended, stop := context.WithCancelCause(context.Background())
	stop(why)
	soon, cancel := context.WithTimeoutCause(context.Background(), 5*time.Millisecond, why)
	defer cancel()
	tests := []struct {
		name string
		ctx  context.Context
		d    time.Duration
		want error
	}{
		{name: "the duration passes", ctx: context.Background(), d: time.Millisecond},
		{name: "nothing to wait", ctx: context.Background()},
		{name: "a wait too short for a kernel timer", ctx: context.Background(), d: 10 * time.Microsecond},
		{name: "an ended context wins over nothing to wait", ctx: ended, want: why},
		{name: "an ended context returns its cause", ctx: ended, d: time.Hour, want: why},
		{name: "a context that ends while sleeping", ctx: soon, d: time.Hour, want: why},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			err := Sleep(tt.ctx, tt.d)
			require.ErrorIs(t, err, tt.want)
			if tt.want == nil {
				require.GreaterOrEqual(t, time.Since(start), tt.d)
			}
		})
	}
}
