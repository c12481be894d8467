package daemon

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A wait for room ends at the sooner of its own deadline and its
// context's, and its timer starts only once something waits on it.
func TestLazyDeadline(t *testing.T) {
	soon := time.Now().Add(time.Hour)
	parent, cancel := context.WithDeadline(context.Background(), soon)
	defer cancel()
	l := &lazyDeadline{Context: parent, deadline: soon.Add(time.Hour)}
	d, ok := l.Deadline()
	require.True(t, ok)
	require.Equal(t, soon, d, "the context's, sooner")
	require.Nil(t, l.inner, "no timer before a wait")
	l.stop()

	l = &lazyDeadline{Context: context.Background(), deadline: time.Now().Add(20 * time.Millisecond)}
	defer l.stop()
	select {
	case <-l.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the wait did not end at its deadline")
	}
	require.ErrorIs(t, l.Err(), context.DeadlineExceeded)
}
