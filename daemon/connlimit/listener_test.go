package connlimit

import (
	"bufio"
	"net"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/kserve"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestListenerRefusesConnectionsOverTheCap(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ln := NewListener(inner, 2)
	ln.res.max = 0 // the reserve: TestTheReserveAnswersChecksOverTheCap
	defer ln.Close()
	accepted := make(chan net.Conn, 4)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				close(accepted)
				return
			}
			accepted <- c
		}
	}()
	dial := func() net.Conn {
		c, err := net.Dial("tcp", inner.Addr().String())
		require.NoError(t, err)
		return c
	}
	a, b := dial(), dial()
	ca, cb := <-accepted, <-accepted
	require.EqualValues(t, 2, ln.Open())

	over := dial()
	require.NoError(t, over.SetReadDeadline(time.Now().Add(5*time.Second)))
	resp, err := http.ReadResponse(bufio.NewReader(over), nil)
	require.NoError(t, err, "the refused client reads a complete answer")
	require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	require.Equal(t, "1", resp.Header.Get("Retry-After"))
	require.Equal(t, "connection_limit", resp.Header.Get(kserve.HeaderFailureReason))
	require.NoError(t, resp.Body.Close())
	require.NoError(t, over.Close())
	require.EqualValues(t, 1, ln.Refused())
	require.EqualValues(t, 2, ln.Open())

	require.NoError(t, ca.Close())
	_ = ca.Close() // closing twice gives one place back
	require.EqualValues(t, 1, ln.Open())
	c := dial()
	cc := <-accepted
	require.EqualValues(t, 2, ln.Open(), "a closed connection's place is taken again")
	for _, x := range []net.Conn{a, b, c, cb, cc} {
		require.NoError(t, x.Close())
	}
	require.NoError(t, ln.Close())
	for range accepted {
	}
}

// besidePair is a listener capped at one connection on inner and one on
// other beside it, both closed when the test ends.
func besidePair(t *testing.T) (ln, beside *Listener, inner, other net.Listener) {
	t.Helper()
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	other, err = net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ln = NewListener(inner, 1)
	beside = ln.Beside(other)
	t.Cleanup(func() { _ = ln.Close(); _ = beside.Close() })
	return ln, beside, inner, other
}

func TestListenerBesideSharesTheCap(t *testing.T) {
	ln, beside, inner, other := besidePair(t)
	beside.res.max = 0 // the reserve: TestTheReserveBesideIsForHealthChecks

	a, err := net.Dial("tcp", inner.Addr().String())
	require.NoError(t, err)
	ca, err := ln.Accept()
	require.NoError(t, err)
	require.EqualValues(t, 1, beside.Open(), "one count for both")

	over, err := net.Dial("tcp", other.Addr().String())
	require.NoError(t, err)
	// Accept refuses the connection over the cap and waits for the next.
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := beside.Accept()
		if err != nil {
			close(accepted)
			return
		}
		accepted <- c
	}()
	require.NoError(t, over.SetReadDeadline(time.Now().Add(5*time.Second)))
	n, err := over.Read(make([]byte, 1))
	require.Zero(t, n, "closed without an HTTP answer")
	require.Error(t, err)
	require.Eventually(t, func() bool { return ln.Refused() == 1 }, 5*time.Second, time.Millisecond)

	require.NoError(t, ca.Close())
	b, err := net.Dial("tcp", other.Addr().String())
	require.NoError(t, err)
	cb := <-accepted
	require.NotNil(t, cb, "room again once the first closed")
	for _, x := range []net.Conn{a, over, b, cb} {
		_ = x.Close()
	}
}

// On the gRPC listener beside, a connection over the cap takes a place of
// the reserve, and Reserved tells the server, which sees a call's peer
// address alone, that it may answer health checks there and nothing else.
func TestTheReserveBesideIsForHealthChecks(t *testing.T) {
	ln, beside, _, other := besidePair(t)

	a, err := net.Dial("tcp", other.Addr().String())
	require.NoError(t, err)
	ca, err := beside.Accept()
	require.NoError(t, err)
	over, err := net.Dial("tcp", other.Addr().String())
	require.NoError(t, err)
	co, err := beside.Accept()
	require.NoError(t, err, "over the cap, in the reserve")
	require.EqualValues(t, 1, ln.Open())
	require.False(t, ln.Reserved(ca.RemoteAddr()), "within the cap")
	require.True(t, beside.Reserved(co.RemoteAddr()))
	require.False(t, ln.Reserved(nil))
	beside.res.max = 1
	require.False(t, beside.takeSpare(), "the gRPC listener's reserve is full")
	require.True(t, ln.takeSpare(), "the HTTP listeners' is apart: gRPC clients cannot crowd out HTTP checks")
	ln.res.n.Add(-1)

	// A call refused there ends the connection soon: its place is a
	// health check's. No deadline set after that moves the end.
	before := time.Now()
	beside.Refuse(co.RemoteAddr())
	require.EqualValues(t, 1, ln.Refused())
	ends := func() time.Time { return time.Unix(0, co.(*conn).until.Load()) }
	require.False(t, ends().After(before.Add(refusedLinger+time.Second)), "it ends within refusedLinger, not ReserveLife")
	require.NoError(t, co.SetReadDeadline(time.Now().Add(time.Hour)))
	require.False(t, ends().After(before.Add(refusedLinger+time.Second)), "a later deadline does not move the end")
	_, err = co.Read(make([]byte, 1))
	require.ErrorIs(t, err, os.ErrDeadlineExceeded, "the end applies to reads")

	require.NoError(t, co.Close())
	require.False(t, ln.Reserved(co.RemoteAddr()), "a closed connection leaves the reserve")
	for _, x := range []net.Conn{a, ca, over} {
		require.NoError(t, x.Close())
	}
}
