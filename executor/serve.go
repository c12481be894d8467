package executor

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"

	pb "github.com/gpulet/gpuletd/executor/executorpb"
	"google.golang.org/grpc"
)

// Serve answers gRPC calls on ln until ctx ends, then stops the gRPC server
// (open streams end, so clients see their calls fail fast).
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	g := grpc.NewServer(grpc.MaxRecvMsgSize(maxMessage), grpc.MaxSendMsgSize(maxMessage))
	pb.RegisterExecutorServer(g, s)
	served := make(chan error, 1)
	go func() { served <- g.Serve(ln) }()
	select {
	case err := <-served:
		return fmt.Errorf("serve executor: %w", err)
	case <-ctx.Done():
	}
	g.Stop()
	if err := <-served; err != nil && !errors.Is(err, grpc.ErrServerStopped) {
		return fmt.Errorf("serve executor: %w", err)
	}
	return nil
}

// ListenUnix listens on a Unix socket at path, replacing a stale socket file
// and making the socket reachable only by its owner.
func ListenUnix(path string) (net.Listener, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return nil, fmt.Errorf("listen on %s: %w", path, err)
	}
	if st, err := os.Lstat(path); err == nil {
		if st.Mode()&os.ModeSocket == 0 {
			return nil, fmt.Errorf("listen on %s: a file that is not a socket is in the way", path)
		}
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("listen on %s: remove stale socket: %w", path, err)
		}
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", path, err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("listen on %s: %w", path, err)
	}
	return ln, nil
}
