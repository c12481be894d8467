package daemon

import (
	"syscall"

	"go.uber.org/zap"
)

// fdReserve is how many open files the daemon keeps for itself beside its
// clients' connections: the store, executor sockets and pipes, devices.
const fdReserve = 256

// connectionCap is limits.max_connections held under the process's
// open-file limit, so that clients cannot use up the descriptors the daemon
// needs to serve them (it logs when it lowers the cap).
func connectionCap(want int, log *zap.Logger) int {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		log.Warn("read the open-file limit", zap.Error(err))
		return want
	}
	return capConnections(want, lim.Cur, log)
}

// capConnections is connectionCap's rule for an open-file limit of nofile.
func capConnections(want int, nofile uint64, log *zap.Logger) int {
	room := int64(nofile) - fdReserve
	if nofile > 1<<40 || int64(want) <= room {
		return want
	}
	got := int(max(room, 16))
	log.Warn("limits.max_connections is over what the open-file limit leaves; raise LimitNOFILE (ulimit -n) to keep it",
		zap.Int("max_connections", want), zap.Uint64("open_file_limit", nofile), zap.Int("using", got))
	return got
}
