package daemon

import (
	"net"
	"os"

	"go.uber.org/zap"

	"github.com/gpulet/gpuletd/daemon/config"
	"github.com/gpulet/gpuletd/internal/listenfile"
)

// recordListeners writes where the daemon listens into runtime_dir
// (package listenfile), so that the command line finds a daemon whose
// addresses are not its own configuration's (one started by gpuletd
// tritonserver on Triton's ports, or with a port of 0). Each address keeps
// its configured host and takes the port its listener bound. The returned
// function takes the record away at the end. A record that cannot be
// written is logged: the daemon serves without it.
func recordListeners(log *zap.Logger, cfg config.Config, rest, grpcLn, metrics net.Listener, tls bool) (remove func()) {
	r := listenfile.Record{PID: os.Getpid(), Listen: boundAs(cfg.Listen, rest), TLS: tls,
		GRPCListen: boundAs(cfg.GRPCListen, grpcLn), MetricsListen: boundAs(cfg.Metrics.Listen, metrics)}
	if err := listenfile.Write(cfg.RuntimeDir, r); err != nil {
		log.Warn("the command line will not find this daemon's addresses unless its configuration gives them", zap.Error(err))
		return func() {}
	}
	return func() {
		if err := listenfile.Remove(cfg.RuntimeDir, r.PID); err != nil {
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
