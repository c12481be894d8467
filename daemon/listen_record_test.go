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

	remove := recordListeners(zap.NewNop(), cfg, rest, grpcLn, nil, true)
	b, err := os.ReadFile(filepath.Join(cfg.RuntimeDir, listenfile.FileName))
	require.NoError(t, err)
	require.JSONEq(t, `{"pid": `+strconv.Itoa(os.Getpid())+`, "listen": "0.0.0.0:`+restPort+`", "tls": true, "grpc_listen": "127.0.0.1:`+grpcPort+`"}`, string(b))
	remove()
	require.NoFileExists(t, filepath.Join(cfg.RuntimeDir, listenfile.FileName))
}
