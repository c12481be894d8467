package httpbench

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	pb "github.com/gpulet/gpuletd/kserve/inferencepb"
	"github.com/gpulet/gpuletd/sim/loadgen"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
)

// The bare server runs as a process of its own, as every real server does
// and as the daemon does: a request then crosses from the generator's
// process to another and back, and pays for waking that process. Run
// inside the generator's process instead (InProcessEcho), the bare server
// answers on threads the generator has just used and is spared that
// wake-up: measured on the 2-vCPU VM of docs/BENCHMARKS.md, the bare gRPC
// server's p50 was 89–135 µs in-process against 235–241 µs as a process of
// its own, at 400 requests/s; the daemon's overhead over it read 100–150 µs
// more than the daemon added.

// EchoSpec is what a bare server answers: over HTTP, Body with Header; over
// gRPC, GRPCAnswer (a marshalled ModelInferResponse) to every ModelInfer.
type EchoSpec struct {
	Protocol   string            `json:"protocol"` // "http" or "grpc"
	Body       []byte            `json:"body,omitempty"`
	Header     map[string]string `json:"header,omitempty"`
	GRPCAnswer []byte            `json:"grpc_answer,omitempty"`
}

// ErrEchoSpec is wrapped by errors about an EchoSpec.
var ErrEchoSpec = errors.New("bad echo spec")

// ReadEchoSpec reads an EchoSpec written by the bench.
func ReadEchoSpec(path string) (*EchoSpec, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read echo spec: %w", err)
	}
	var s EchoSpec
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("read echo spec %s: %w: %w", path, ErrEchoSpec, err)
	}
	if s.Protocol != "http" && s.Protocol != "grpc" {
		return nil, fmt.Errorf("read echo spec %s: %w: protocol %q: use http or grpc", path, ErrEchoSpec, s.Protocol)
	}
	return &s, nil
}

// ServeEcho serves the spec's answer on ln until ctx ends: the bare server
// of `gpuletd bench http` and `bench grpc`, as a process of its own.
func ServeEcho(ctx context.Context, spec *EchoSpec, ln net.Listener) error {
	var serve func() error
	var stop func()
	switch spec.Protocol {
	case "http":
		h := http.Header{}
		for k, v := range spec.Header {
			h.Set(k, v)
		}
		srv := &http.Server{Handler: &loadgen.Echo{Body: spec.Body, Header: h}, ReadHeaderTimeout: 10 * time.Second}
		serve = func() error { return srv.Serve(ln) }
		stop = func() {
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = srv.Shutdown(sctx)
		}
	case "grpc":
		ans := &pb.ModelInferResponse{}
		if err := proto.Unmarshal(spec.GRPCAnswer, ans); err != nil {
			return fmt.Errorf("serve echo: %w: grpc answer: %w", ErrEchoSpec, err)
		}
		srv := grpc.NewServer()
		pb.RegisterGRPCInferenceServiceServer(srv, &grpcEcho{answer: ans})
		serve = func() error { return srv.Serve(ln) }
		stop = srv.Stop
	default:
		return fmt.Errorf("serve echo: %w: protocol %q", ErrEchoSpec, spec.Protocol)
	}
	done := make(chan error, 1)
	go func() { done <- serve() }()
	select {
	case err := <-done:
		return fmt.Errorf("serve echo: %w", err)
	case <-ctx.Done():
		stop()
		<-done
		return nil
	}
}

// bareServer is a running bare server: a process of its own (pid > 0) or
// ServeEcho inside this one (pid 0).
type bareServer struct {
	addr string // host:port
	pid  int
	stop func() // ends it and waits for it
}

// startBareServer starts the bare server for spec: as `gpuletd bench
// echo-server` in a process of its own, or in this process when
// o.InProcessEcho.
func startBareServer(o *Options, dir string, spec *EchoSpec) (*bareServer, error) {
	if o.InProcessEcho {
		return startEchoInProcess(spec)
	}
	return startEchoProcess(o, dir, spec)
}

// startEchoInProcess serves spec on a free loopback port from this process.
func startEchoInProcess(spec *EchoSpec) (*bareServer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen for the echo server: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = ServeEcho(ctx, spec, ln)
	}()
	return &bareServer{addr: ln.Addr().String(), stop: func() { cancel(); <-done }}, nil
}

// echoReadyTimeout bounds the wait for the bare server's address.
const echoReadyTimeout = 30 * time.Second

// startEchoProcess writes spec into dir and starts the bare server on it;
// the server prints "listening <addr>" once it serves.
func startEchoProcess(o *Options, dir string, spec *EchoSpec) (*bareServer, error) {
	b, err := json.Marshal(spec)
	if err != nil {
		return nil, fmt.Errorf("write echo spec: %w", err)
	}
	path := filepath.Join(dir, "echo-"+spec.Protocol+".json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		return nil, fmt.Errorf("write echo spec: %w", err)
	}
	cmd := exec.Command(o.Exe, "bench", "echo-server", "--spec", path)
	cmd.Env, cmd.Dir, cmd.Stderr = o.Environ, dir, io.Discard
	cmd.SysProcAttr = diesWithBench()
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("start the echo server: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start the echo server: %w", err)
	}
	done := make(chan error, 1)
	e := &bareServer{pid: cmd.Process.Pid, stop: func() { stopChild(cmd.Process, done, 10*time.Second) }}
	line := make(chan string, 1)
	go func() {
		s := bufio.NewScanner(out)
		if s.Scan() {
			line <- s.Text()
		}
		close(line)
		_, _ = io.Copy(io.Discard, out) // until the process ends
		done <- cmd.Wait()
	}()
	select {
	case l, ok := <-line:
		addr, found := strings.CutPrefix(l, "listening ")
		if ok && found {
			e.addr = addr
			return e, nil
		}
		e.stop()
		return nil, fmt.Errorf("start the echo server: it printed %q, not its address", l)
	case <-time.After(echoReadyTimeout):
		e.stop()
		return nil, fmt.Errorf("start the echo server: no address within %s", echoReadyTimeout)
	}
}
