package modelopen

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that InChild leaves no goroutine of its child's behind.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
