package alerts

import (
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/gpulet/gpuletd/internal/promnames"
	"github.com/stretchr/testify/require"
)

// promtool runs promtool with args in this folder, or skips without it
// (make test-deps installs it).
func promtool(t *testing.T, args ...string) string {
	t.Helper()
	bin, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("promtool is not installed; make test-deps installs it")
	}
	out, err := exec.Command(bin, args...).CombinedOutput()
	require.NoError(t, err, "promtool %v:\n%s", args, out)
	return string(out)
}

// TestRulesAreValid: promtool reads every rule.
func TestRulesAreValid(t *testing.T) {
	require.Contains(t, promtool(t, "check", "rules", "gpuletd.rules.yml"), "SUCCESS: 19 rules found")
}

// TestRulesFireWhereTheyShould: promtool's unit tests of the rules pass
// (each alert fires on its series and stays quiet before and after).
func TestRulesFireWhereTheyShould(t *testing.T) {
	require.Contains(t, promtool(t, "test", "rules", "gpuletd.rules.test.yml"), "SUCCESS")
}

// TestRulesReadDocumentedMetrics: every gpuletd family the rules name is a
// row of OPERATIONS.md's metrics table, so that a renamed family cannot
// leave a rule reading nothing.
func TestRulesReadDocumentedMetrics(t *testing.T) {
	names := Metrics()
	require.Contains(t, names, "gpuletd_model_state")
	missing, err := promnames.Undocumented(filepath.Join("..", "docs", "OPERATIONS.md"), names)
	require.NoError(t, err)
	require.Empty(t, missing, "read by the rules but not in OPERATIONS.md's metrics table")
}
