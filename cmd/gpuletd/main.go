// Command gpuletd serves many DNN models with latency SLOs on one multi-GPU
// server. See `gpuletd --help`.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// run executes the command line and returns the process exit code: 0 on
// success, 2 for usage errors and unavailable commands, 1 otherwise.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := newRootCmd()
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	var ex *exitError
	if errors.As(err, &ex) {
		if ex.msg != "" {
			fmt.Fprintln(stderr, ex.msg)
		}
		return ex.code
	}
	fmt.Fprintln(stderr, "gpuletd: "+err.Error())
	if isUsageError(err) {
		return 2
	}
	return 1
}

// exitError ends the program with a given code and one message line.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }
