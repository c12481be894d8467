package daemon

import (
	"net"
	"os"

	"go.uber.org/zap"

	"github.com/gpulet/gpuletd/daemon/config"
	"github.com/gpulet/gpuletd/internal/listenfile"
)

// boundListeners is where this process's listeners bound: each address
// keeps its configured host and takes the port its listener bound (a port
// of 0 resolved); "" for a listener that is off.
func boundListeners(cfg config.Config, rest, grpcLn, metrics net.Listener, tls bool) listenfile.Record {
	return listenfile.Record{PID: os.Getpid(), Listen: boundAs(cfg.Listen, rest), TLS: tls,
		GRPCListen: boundAs(cfg.GRPCListen, grpcLn), MetricsListen: boundAs(cfg.Metrics.Listen, metrics)}
}

// listeners is where the REST, gRPC and metrics listeners are: where they
// bound once they have, the configured addresses before (or in a node
// that serves none, as in tests).
func (n *node) listeners() (rest, grpc, metrics string) {
	if b := n.bound.Load(); b != nil {
		return b.Listen, b.GRPCListen, b.MetricsListen
	}
	c := n.conf()
	return c.Listen, c.GRPCListen, c.Metrics.Listen
}

// recordListeners writes r, where the daemon listens, into dir, its
// runtime_dir (package listenfile), so that the command line finds a
// daemon whose addresses are not its own configuration's (one started by
// gpuletd tritonserver on Triton's ports, or with a port of 0). The
// returned function takes the record away at the end. A record that
// cannot be written is logged: the daemon serves without it.
func recordListeners(log *zap.Logger, dir string, r listenfile.Record) (remove func()) {
	if err := listenfile.Write(dir, r); err != nil {
		log.Warn("the command line will not find this daemon's addresses unless its configuration gives them", zap.Error(err))
		return func() {}
	}
	return func() {
		if err := listenfile.Remove(dir, r.PID); err != nil {
			log.Debug("listen record left", zap.Error(err))
		}
	}
}

// boundAs is configured's host with the port ln bound (a port of 0
// resolved); "" without a listener.
func boundAs(configured string, ln net.Listener) string {
	if ln == nil {
		return ""
	}
	bound := ln.Addr().String()
	host, _, err := net.SplitHostPort(configured)
	_, port, err2 := net.SplitHostPort(bound)
	if err != nil || err2 != nil {
		return bound
	}
	return net.JoinHostPort(host, port)
}
