package executor

import (
	"testing"

	"github.com/gpulet/gpuletd/internal/testbin"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.Cleanup(func(int) { testbin.Cleanup() }))
}
