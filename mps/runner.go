package mps

import (
	"context"
	"io"
	"os"
)

// Command is a program to run with its input.
type Command struct {
	// Path is the program, a path or a name looked up on PATH.
	Path string
	Args []string
	// Env is added to the inherited environment; a later KEY= wins.
	Env []string
	// Stdin is written to the program's standard input.
	Stdin string
	// Output takes a started program's standard output and error (Start);
	// nil: this process's standard error.
	Output io.Writer
}

// Result is what a command that ran to its end left.
type Result struct {
	Stdout   string
	Stderr   string
	ExitCode int
}

// Process is a long-running command that was started.
type Process interface {
	// PID is the operating-system process id.
	PID() int
	// Done is closed when the process has exited.
	Done() <-chan struct{}
	// Err is how the process ended; valid once Done is closed.
	Err() error
	// Signal sends a signal to the process.
	Signal(sig os.Signal) error
}

// Runner runs programs. The MPS control program comes in through it, so that
// tests can use a fake one and nothing here execs behind the caller's back.
type Runner interface {
	// Run runs a command to its end. A non-zero exit is an error that also
	// returns the Result; ctx bounds the run (the process is killed when it ends).
	Run(ctx context.Context, c Command) (Result, error)
	// Start starts a long-running command; ctx bounds its whole life.
	Start(ctx context.Context, c Command) (Process, error)
}
