package daemon

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/gpulet/gpuletd/daemon/config"
	"github.com/gpulet/gpuletd/internal/listenfile"
)

// TestListenersAreRecorded: the record keeps each configured host with the
// port its listener bound (a port of 0 resolved), names no listener that
// does not run, and goes when the daemon stops.
func TestListenersAreRecorded(t *testing.T) {
	listen := func() net.Listener {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		t.Cleanup(func() { _ = ln.Close() })
		return ln
	}
	rest, grpcLn := listen(), listen()
	_, restPort, _ := net.SplitHostPort(rest.Addr().String())
	_, grpcPort, _ := net.SplitHostPort(grpcLn.Addr().String())
	cfg := config.Config{Listen: "0.0.0.0:0", GRPCListen: "127.0.0.1:0", RuntimeDir: t.TempDir()}

	remove := recordListeners(zap.NewNop(), cfg.RuntimeDir, boundListeners(cfg, rest, grpcLn, nil, true))
	b, err := os.ReadFile(filepath.Join(cfg.RuntimeDir, listenfile.FileName))
	require.NoError(t, err)
	require.JSONEq(t, `{"pid": `+strconv.Itoa(os.Getpid())+`, "listen": "0.0.0.0:`+restPort+`", "tls": true, "grpc_listen": "127.0.0.1:`+grpcPort+`"}`, string(b))
	remove()
	require.NoFileExists(t, filepath.Join(cfg.RuntimeDir, listenfile.FileName))
}

// TestStatusSaysWhereListenersBound: before the listeners bind, status
// gives the configured addresses; after, where they bound, so that a port
// of 0 reads as the port a client reaches (gpuletd status printed "gRPC on
// 127.0.0.1:0" for a daemon started with GPULETD_GRPC_LISTEN=127.0.0.1:0).
func TestStatusSaysWhereListenersBound(t *testing.T) {
	n := &node{}
	cfg := config.Config{Listen: "127.0.0.1:0", GRPCListen: "127.0.0.1:0", Metrics: config.Metrics{Listen: ""}}
	n.cfg.Store(&cfg)
	rest, grpcAt, metricsAt := n.listeners()
	require.Equal(t, []string{"127.0.0.1:0", "127.0.0.1:0", ""}, []string{rest, grpcAt, metricsAt})

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = ln.Close() })
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	bound := boundListeners(cfg, ln, nil, nil, false)
	n.bound.Store(&bound)
	rest, grpcAt, metricsAt = n.listeners()
	require.Equal(t, []string{"127.0.0.1:" + port, "", ""}, []string{rest, grpcAt, metricsAt},
		"a listener that did not open (no gRPC listener here) is off")
}
