package daemon

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/gpulet/gpuletd/internal/testbin"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.Cleanup(func(int) { testbin.Cleanup() }))
}
