package main

import (
	"os"
	"testing"

	"github.com/gpulet/gpuletd/internal/testbin"
)

// TestMain removes the binary the end-to-end tests built.
func TestMain(m *testing.M) {
	code := m.Run()
	testbin.Cleanup()
	os.Exit(code)
}
