package ctxsleep

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var errWhy = errors.New("told to stop")

func TestSleep(t *testing.T) {
	ended, stop := context.WithCancelCause(context.Background())
	stop(errWhy)
	tests := []struct {
		name string
		ctx  func(t *testing.T) context.Context
		d    time.Duration
		want error
	}{
		{"the duration passes", func(*testing.T) context.Context { return context.Background() }, time.Millisecond, nil},
		{"nothing to wait", func(*testing.T) context.Context { return context.Background() }, 0, nil},
		{"an ended context wins over nothing to wait", func(*testing.T) context.Context { return ended }, 0, errWhy},
		{"an ended context returns its cause", func(*testing.T) context.Context { return ended }, time.Hour, errWhy},
		{"a context that ends while sleeping", func(t *testing.T) context.Context {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
			t.Cleanup(cancel)
			return ctx
		}, time.Hour, context.DeadlineExceeded},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := Sleep(tc.ctx(t), tc.d)
			if tc.want == nil {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, tc.want)
		})
	}
}
