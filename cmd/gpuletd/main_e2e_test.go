package main

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/gpulet/gpuletd/internal/testbin"
)

// TestMain removes the binary the end-to-end tests built and checks that
// no goroutine outlived the tests.
func TestMain(m *testing.M) {
	code := m.Run()
	testbin.Cleanup()
	if code == 0 {
		// The commands run in this process too (load, bench, status…):
		// whatever goroutine they start must have ended with them.
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}
