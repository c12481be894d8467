package web_test

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/modelzoo"
)

// TestPageSaysWhatReadinessWaitsOn: with strict_readiness and startup_models,
// the page's summary says, in a real browser, that the server is not ready
// and for which model, and which folders were not loaded at start.
func TestPageSaysWhatReadinessWaitsOn(t *testing.T) {
	browserPath := chromium(t)
	d := startDaemonWith(t, []string{"mlp"}, "strict_readiness: true\nstartup_models: [mlp, broken]\n", func(repo string) {
		require.NoError(t, modelzoo.WriteRepository(repo, []string{"lenet5"}, 1, modelzoo.WithOverwrite())) // left out at start
		require.NoError(t, os.MkdirAll(filepath.Join(repo, "broken", "1"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(repo, "broken", "config.yaml"), []byte("slo: 10ms\nmax_batch_size: 4\n"), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(repo, "broken", "1", "model.onnx"), []byte("junk"), 0o644))
	})
	b := startBrowser(t, browserPath)
	b.run(t, chromedp.Navigate(d.base+"/"))
	summary := func(key string) string {
		return eval[string](t, b, `document.querySelector('#summary [data-key="`+key+`"] dd')?.textContent ?? ''`)
	}
	require.Eventually(t, func() bool {
		return summary("ready") == "no (strict readiness: broken cannot be served)" &&
			summary("not-loaded") == "lenet5 (startup_models)"
	}, 20*time.Second, 100*time.Millisecond, "ready %q, not loaded %q; logs:\n%s", summary("ready"), summary("not-loaded"), d.logs)

	// A model unloaded through the repository API is named too, until it is
	// loaded again.
	resp, err := http.Post(d.base+"/v2/repository/models/mlp/unload", "application/json", nil)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Eventually(t, func() bool { return summary("unloaded") == "mlp (gpuletd models load NAME)" },
		20*time.Second, 100*time.Millisecond, "unloaded %q", summary("unloaded"))
}
