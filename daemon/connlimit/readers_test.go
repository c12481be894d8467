package connlimit

import (
	"errors"
	"net"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Past its bound, readers ends the read of the connection that has waited
// longest, so that a storm of connections that send nothing cannot keep a
// new one (a health check) from being read.
func TestReadersEndTheOldestPastTheBound(t *testing.T) {
	var r readers
	var ends []net.Conn
	for range 3 {
		a, b := net.Pipe()
		t.Cleanup(func() { _ = a.Close(); _ = b.Close() })
		ends = append(ends, a)
		require.NoError(t, a.SetReadDeadline(time.Now().Add(time.Minute)))
		r.add(a, 2)
	}
	readErr := func(c net.Conn) error {
		done := make(chan error, 1)
		go func() {
			_, err := c.Read(make([]byte, 1))
			done <- err
		}()
		select {
		case err := <-done:
			return err
		case <-time.After(200 * time.Millisecond):
			_ = c.SetReadDeadline(time.Now())
			<-done
			return nil
		}
	}
	require.True(t, errors.Is(readErr(ends[0]), os.ErrDeadlineExceeded), "the oldest is ended")
	require.NotContains(t, r.at, ends[0])
	require.Contains(t, r.at, ends[1], "the others still wait")
	require.Contains(t, r.at, ends[2])
	require.Equal(t, 2, r.order.Len())

	r.remove(ends[1])
	require.Equal(t, 1, r.order.Len())
	require.NoError(t, ends[2].SetReadDeadline(time.Now().Add(time.Minute)))
	r.endAll()
	require.True(t, errors.Is(readErr(ends[2]), os.ErrDeadlineExceeded), "every read ends when the listener closes")
}
