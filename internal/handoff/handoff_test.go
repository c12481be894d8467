package handoff

import (
	"errors"
	"net"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestListener(t *testing.T) {
	addr := &net.UnixAddr{Name: "/run/x.sock", Net: "unix"}
	l := New(addr)
	require.Equal(t, addr, l.Addr())
	a, b := net.Pipe()
	defer b.Close()
	given := make(chan bool)
	go func() { given <- l.Give(a) }()
	c, err := l.Accept()
	require.NoError(t, err)
	require.Same(t, a, c)
	require.True(t, <-given)

	require.NoError(t, l.Close())
	require.NoError(t, l.Close(), "twice is fine")
	_, err = l.Accept()
	require.True(t, errors.Is(err, net.ErrClosed))
	require.False(t, l.Give(a), "nothing takes it once closed")
	require.NoError(t, a.Close())
}
