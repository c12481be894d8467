// Package modelopen opens a model file in ONNX Runtime in a process of its
// own: a repository check (gpuletd models check, doctor) of a model whose
// configuration names custom operator libraries runs their code, and a
// library that crashes must fail that model's check, not end the check.
// The daemon's executors and profile runs already open models in
// processes of their own.
package modelopen

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"

	"github.com/gpulet/gpuletd/executor/onnxrt"
	"github.com/gpulet/gpuletd/internal/crashlog"
	"github.com/gpulet/gpuletd/internal/selfexe"
)

// Command is the gpuletd subcommand that opens one model (Open) and exits
// ExitCannotOpen, with the reason on its standard error, when it cannot.
const Command = "open-model"

// ExitCannotOpen is the exit status of a Command that ran and found that
// ONNX Runtime cannot open the model.
const ExitCannotOpen = 3

// keep bounds what InChild keeps of the end of the child's output besides
// a crash's headline: the reason it gives fits in a line or a few.
const keep = 8 << 10

// Open opens the model at path in ONNX Runtime, loaded from library, after
// the custom operator libraries opLibraries, as an executor does: the
// child's side of InChild.
func Open(library, path string, opLibraries []string) error {
	if err := onnxrt.Init(library); err != nil {
		return err
	}
	_, err := onnxrt.ReadModelInfo(path, opLibraries...)
	return err
}

// InChild opens the model at path as Open does, in a child process of
// binary ("": the binary this process runs) given the ONNX Runtime library
// library, and returns why it cannot be opened: the child's reason, or
// that opening it crashed the child (the crash report's headline) or
// outlived ctx. Its errors do not name the file: the caller's do.
func InChild(ctx context.Context, binary, library, path string, opLibraries []string) error {
	args := []string{Command, "--onnxruntime-library", library}
	for _, l := range opLibraries {
		args = append(args, "--op-library", l)
	}
	cmd, err := selfexe.Command(ctx, binary, append(args, "--", path)...)
	if err != nil {
		return fmt.Errorf("open the model in a process of its own: %w", err)
	}
	out := crashlog.NewTail(keep)
	cmd.Stdout, cmd.Stderr = io.Discard, out
	err = cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return fmt.Errorf("open the model with its custom operator libraries: no answer from the process opening it: %w", context.Cause(ctx))
	case !errors.As(err, &exit):
		return fmt.Errorf("open the model in a process of its own: %w", err)
	case exit.ExitCode() == ExitCannotOpen:
		return errors.New(strings.TrimSpace(out.String()))
	}
	why := out.Headline()
	if why == "" {
		why = exit.String()
		if last := lastLine(out.String()); last != "" {
			why += ": " + last
		}
	}
	return fmt.Errorf("open the model with its custom operator libraries: the process opening it crashed: %s", why)
}

// lastLine is the last non-empty line of s, trimmed.
func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return strings.TrimSpace(s)
}
