// Command fakempscontrol stands in for nvidia-cuda-mps-control in tests. It
// speaks the same command line (-d, -f, or commands on stdin) over a Unix
// socket in CUDA_MPS_PIPE_DIRECTORY, records what it is asked to a file, and
// can be told to misbehave through files in the directory FAKEMPS_STATE names:
//
//	record       every invocation and command is appended here
//	fail-start   -d and -f exit 1
//	fail-query   commands exit 1
//	hang-start   -d and -f never return
//	hang-query   commands never return
//	die-after    the daemon exits after this duration (the file is consumed)
package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	state := os.Getenv("FAKEMPS_STATE")
	pipe := os.Getenv("CUDA_MPS_PIPE_DIRECTORY")
	if pipe == "" {
		pipe = "/tmp/nvidia-mps"
	}
	f := fake{state: state, pipe: pipe, sock: filepath.Join(pipe, "control")}
	mode := ""
	if len(os.Args) > 1 {
		mode = os.Args[1]
	}
	switch mode {
	case "-d":
		os.Exit(f.daemonize())
	case "-f":
		os.Exit(f.foreground())
	case "--serve":
		os.Exit(f.serve(io.Discard))
	case "":
		os.Exit(f.client())
	default:
		fmt.Fprintf(os.Stderr, "unknown option %s\n", mode)
		os.Exit(2)
	}
}

type fake struct {
	state, pipe, sock string
}

func (f fake) has(name string) bool {
	if f.state == "" {
		return false
	}
	_, err := os.Stat(filepath.Join(f.state, name))
	return err == nil
}

func (f fake) record(format string, args ...any) {
	if f.state == "" {
		return
	}
	fh, err := os.OpenFile(filepath.Join(f.state, "record"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return
	}
	defer fh.Close()
	fmt.Fprintf(fh, format+"\n", args...)
}

func (f fake) recordStart(mode string) {
	f.record("start %s CUDA_VISIBLE_DEVICES=%s CUDA_MPS_PIPE_DIRECTORY=%s CUDA_MPS_LOG_DIRECTORY=%s",
		mode, os.Getenv("CUDA_VISIBLE_DEVICES"), os.Getenv("CUDA_MPS_PIPE_DIRECTORY"), os.Getenv("CUDA_MPS_LOG_DIRECTORY"))
}

func (f fake) running() bool {
	c, err := net.DialTimeout("unix", f.sock, time.Second)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

func (f fake) misbehaveOnStart() (int, bool) {
	if f.has("hang-start") {
		time.Sleep(time.Hour) // "hang"; select{} would be a deadlock panic
	}
	if f.has("fail-start") {
		fmt.Fprintln(os.Stderr, "fake: start refused")
		return 1, true
	}
	if f.running() {
		fmt.Fprintln(os.Stderr, "An instance of this daemon is already running")
		return 1, true
	}
	return 0, false
}

// daemonize starts a detached server and returns once it listens.
func (f fake) daemonize() int {
	f.recordStart("-d")
	if code, stop := f.misbehaveOnStart(); stop {
		return code
	}
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	cmd := exec.Command(self, "--serve")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.After(5 * time.Second)
	for {
		select {
		case err := <-exited:
			fmt.Fprintf(os.Stderr, "fake: daemon exited at start: %v\n", err)
			return 1
		case <-deadline:
			fmt.Fprintln(os.Stderr, "fake: daemon did not come up")
			return 1
		case <-time.After(5 * time.Millisecond):
			if f.running() {
				return 0
			}
		}
	}
}

func (f fake) foreground() int {
	f.recordStart("-f")
	if code, stop := f.misbehaveOnStart(); stop {
		return code
	}
	return f.serve(os.Stdout)
}

// serve answers commands on the control socket and, as the real daemon
// does in the foreground, prints its log to logs.
func (f fake) serve(logs io.Writer) int {
	_ = os.Remove(f.sock)
	ln, err := net.Listen("unix", f.sock)
	if err != nil {
		fmt.Fprintf(os.Stderr, "fake: listen: %v\n", err)
		return 1
	}
	pidFile := filepath.Join(f.pipe, "nvidia-cuda-mps-control.pid")
	_ = os.WriteFile(pidFile, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644)
	if f.state != "" {
		name := filepath.Join(f.state, "die-after")
		if b, err := os.ReadFile(name); err == nil {
			_ = os.Remove(name)
			if d, err := time.ParseDuration(strings.TrimSpace(string(b))); err == nil {
				time.AfterFunc(d, func() {
					f.record("die")
					os.Exit(3) // no clean-up: the socket stays behind, as after a crash
				})
			}
		}
	}
	percentage := "100.0"
	for {
		c, err := ln.Accept()
		if err != nil {
			return 1
		}
		line, _ := bufio.NewReader(c).ReadString('\n')
		line = strings.TrimSpace(line)
		fmt.Fprintf(logs, "[%s Control  %d] Cmd:%s\n", time.Now().Format("2006-01-02 15:04:05.000"), os.Getpid(), line)
		fields := strings.Fields(line)
		var reply string
		quit := false
		switch {
		case line == "get_server_list":
			reply = ""
		case line == "quit":
			quit = true
		case len(fields) == 2 && fields[0] == "set_default_active_thread_percentage":
			percentage = fields[1]
			reply = percentage + "\n"
		case line == "get_default_active_thread_percentage":
			reply = percentage + "\n"
		default:
			reply = "Unknown command\n"
		}
		_, _ = io.WriteString(c, reply)
		c.Close()
		if quit {
			f.record("quit") // before the socket goes, so that whoever waits for that sees the record
			ln.Close()
			_ = os.Remove(f.sock)
			_ = os.Remove(pidFile)
			return 0
		}
	}
}

func (f fake) client() int {
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		f.record("cmd %s", line)
		if f.has("hang-query") {
			time.Sleep(time.Hour) // "hang"; select{} would be a deadlock panic
		}
		if f.has("fail-query") {
			fmt.Fprintln(os.Stderr, "fake: query refused")
			return 1
		}
		c, err := net.DialTimeout("unix", f.sock, time.Second)
		if err != nil {
			fmt.Fprintln(os.Stderr, "Cannot find MPS control daemon process")
			return 1
		}
		_, _ = io.WriteString(c, line+"\n")
		out, _ := io.ReadAll(c)
		c.Close()
		os.Stdout.Write(out)
	}
	return 0
}
