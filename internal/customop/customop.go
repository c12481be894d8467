// Package customop builds custom operator libraries for ONNX Runtime, for
// tests of models whose graphs use an operator of their own (Triton's
// model_operations): one that registers the operator of modelzoo's
// CustomOpModel, one whose registration fails with a known message, and a
// shared library that is not an operator library. It needs a C compiler
// (cc).
package customop

import (
	_ "embed"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/gpulet/gpuletd/internal/cbuild"
	"github.com/gpulet/gpuletd/modelzoo"
)

//go:embed src/addone.c.txt
var source string

// Kind selects the library built.
type Kind int

// The libraries.
const (
	// AddOne registers modelzoo.CustomOpDomain's operator
	// modelzoo.CustomOpName: a float tensor in, each element plus one out,
	// of the same shape; an element equal to Poison crashes the process,
	// one equal to Hang never returns, one equal to Slow returns SlowFor
	// late.
	AddOne Kind = 1
	// Failing: RegisterCustomOps fails with Message.
	Failing Kind = 2
	// NotLibrary: a shared library without RegisterCustomOps.
	NotLibrary Kind = 3
	// Unrelated registers an operator of another name in the same domain
	// (OtherName): a library that loads but does not serve the model.
	Unrelated Kind = 4
	// Crashing: RegisterCustomOps crashes the process that loads it (a
	// write through NULL).
	Crashing Kind = 5
)

// OtherName is the operator an Unrelated library registers.
const OtherName = "AddTwo"

// Poison is the input value an AddOne operator crashes on (a write
// through NULL), as an operator with a bug does on the input that finds
// it.
const Poison = -666

// Hang is the input value an AddOne operator never returns on (it sleeps
// for good), as an operator with a bug that loops does.
const Hang = -777

// Slow is the input value an AddOne operator takes SlowFor longer on: a
// run that is slow, past its deadline, and then ends.
const Slow = -555

// SlowFor is how much longer an AddOne operator takes on Slow.
const SlowFor = 1500 * time.Millisecond

// Message is the error a Failing library's registration returns.
const Message = "license server not reachable"

// Build compiles the library of kind k as dir/name and returns its path.
func Build(t testing.TB, dir, name string, k Kind) string {
	t.Helper()
	out := filepath.Join(dir, name)
	mode, op := k, modelzoo.CustomOpName
	if k == Unrelated {
		mode, op = AddOne, OtherName
	}
	err := cbuild.Shared(out, source, "-O1", "-Wall", "-Werror",
		fmt.Sprintf("-DCUSTOMOP_MODE=%d", mode), fmt.Sprintf("-DCUSTOMOP_MESSAGE=%q", Message),
		fmt.Sprintf("-DCUSTOMOP_DOMAIN=%q", modelzoo.CustomOpDomain), fmt.Sprintf("-DCUSTOMOP_NAME=%q", op),
		fmt.Sprintf("-DCUSTOMOP_POISON=%d.0f", Poison), fmt.Sprintf("-DCUSTOMOP_HANG=%d.0f", Hang),
		fmt.Sprintf("-DCUSTOMOP_SLOW=%d.0f", Slow), fmt.Sprintf("-DCUSTOMOP_SLOW_US=%d", SlowFor.Microseconds()), "-pthread")
	if err != nil {
		t.Fatal(err)
	}
	return out
}
