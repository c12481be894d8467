// Package listenfile says where a running daemon listens: the daemon
// writes the addresses it bound into a file in its runtime directory, and
// the command line, finding nothing at the address its own configuration
// gives (a daemon started by gpuletd tritonserver on Triton's port 8000,
// say), reads them there. A record counts only while the process it names
// holds the directory's lock (package dirlock), so a file a crash left
// behind names nobody.
package listenfile

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"

	"github.com/gpulet/gpuletd/internal/atomicfile"
	"github.com/gpulet/gpuletd/internal/dirlock"
)

// FileName is the record's file in the runtime directory.
const FileName = "gpuletd.listen"

// Record is where one daemon listens: addresses as its listeners bound
// them (host:port, the host possibly unspecified, [::] or 0.0.0.0).
type Record struct {
	// PID is the daemon's process, which holds the directory's lock.
	PID int `json:"pid"`
	// Listen is the REST listener's address, TLS whether it serves HTTPS.
	Listen string `json:"listen"`
	TLS    bool   `json:"tls,omitempty"`
	// GRPCListen and MetricsListen are the gRPC and metrics listeners'
	// addresses; "" where the daemon runs none.
	GRPCListen    string `json:"grpc_listen,omitempty"`
	MetricsListen string `json:"metrics_listen,omitempty"`
}

// Write records r in dir, replacing any record there at once (a reader
// sees the old file or the new one, never half of one).
func Write(dir string, r Record) error {
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("encode listen record: %w", err)
	}
	if err := atomicfile.Write(filepath.Join(dir, FileName), append(b, '\n'), 0o640); err != nil {
		return fmt.Errorf("write listen record: %w", err)
	}
	return nil
}

// Remove deletes dir's record when it is pid's: a daemon stopping takes its
// own record away, never a newer daemon's.
func Remove(dir string, pid int) error {
	r, err := read(dir)
	if err != nil || r.PID != pid {
		return err
	}
	if err := os.Remove(filepath.Join(dir, FileName)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove listen record: %w", err)
	}
	return nil
}

// Live is dir's record when the process it names holds dir's lock now;
// false when there is no record, it cannot be read, or its daemon is gone.
func Live(dir string) (Record, bool) {
	r, err := read(dir)
	if err != nil || r.PID <= 0 || r.Listen == "" {
		return Record{}, false
	}
	held, holder, err := dirlock.FileHolder(filepath.Join(dir, dirlock.FileName))
	if err != nil || !held || holder != strconv.Itoa(r.PID) {
		return Record{}, false
	}
	return r, true
}

// read reads dir's record; a missing file is a zero Record.
func read(dir string) (Record, error) {
	var r Record
	b, err := os.ReadFile(filepath.Join(dir, FileName))
	if errors.Is(err, os.ErrNotExist) {
		return r, nil
	}
	if err != nil {
		return r, fmt.Errorf("read listen record: %w", err)
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return Record{}, fmt.Errorf("read listen record %s: %w", filepath.Join(dir, FileName), err)
	}
	return r, nil
}

// URL is the REST listener's base URL for a client on this host.
func (r Record) URL() (string, error) {
	addr, err := Dialable(r.Listen)
	if err != nil {
		return "", err
	}
	if r.TLS {
		return "https://" + addr, nil
	}
	return "http://" + addr, nil
}

// Dialable is a listen address as a client on this host dials it: an
// empty or unspecified host (":8700", "0.0.0.0:8700", "[::]:8700") is the
// loopback address of its family.
func Dialable(listen string) (string, error) {
	addr, err := DialableAt(listen, "")
	if err != nil {
		return "", fmt.Errorf("read listen address %q: %w", listen, err)
	}
	return addr, nil
}

// DialableAt is a listen address as a client dials it that reaches the
// listener's host as host: an empty or unspecified host (a listener on
// every address) is host, or with host "" the loopback address of its
// family; any other is itself. The error is net.SplitHostPort's.
func DialableAt(listen, host string) (string, error) {
	h, port, err := net.SplitHostPort(listen)
	if err != nil {
		return "", err
	}
	switch ip := net.ParseIP(h); {
	case h != "" && (ip == nil || !ip.IsUnspecified()):
	case host != "":
		h = host
	case ip != nil && ip.To4() == nil:
		h = "::1"
	default:
		h = "127.0.0.1"
	}
	return net.JoinHostPort(h, port), nil
}
