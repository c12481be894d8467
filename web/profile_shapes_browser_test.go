package web_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// TestPageSaysAtWhichShapesAProfileWasMeasured serves the text-like tokens
// model, its ids of any length profiled at the 32 its profile_shapes gives,
// on the CPU: the profile's caption on the page, in a real browser, says
// so, as the profile API's inputs_at does; its large rates' ticks keep
// clear of the axis label.
func TestPageSaysAtWhichShapesAProfileWasMeasured(t *testing.T) {
	browserPath := chromium(t)
	d := startDaemonWith(t, []string{"tokens"}, "devices: [{kind: cpu}]\n", nil)
	var doc struct {
		Profiles []struct {
			InputsAt string `json:"inputs_at"`
		} `json:"profiles"`
	}
	require.NoError(t, d.getJSON("/api/v1/models/tokens/profile", &doc))
	require.Len(t, doc.Profiles, 1)
	require.Equal(t, "ids:32", doc.Profiles[0].InputsAt)

	b := startBrowser(t, browserPath)
	b.run(t, chromedp.Navigate(d.base+"/"))
	sel := `#profile-tokens`
	b.run(t, chromedp.WaitVisible(chromedp.CSS(sel+` > summary`)), chromedp.Click(chromedp.CSS(sel+` > summary`)),
		chromedp.WaitVisible(chromedp.CSS(sel+` figure.profile-fig figcaption`)))
	var caption string
	require.Eventually(t, func() bool {
		caption = eval[string](t, b, `document.querySelector('`+sel+` figure.profile-fig figcaption')?.textContent ?? ''`)
		return strings.HasPrefix(caption, "tokens on cpu")
	}, 20*time.Second, 100*time.Millisecond)
	require.True(t, strings.HasSuffix(caption, "; inputs measured at ids:32"), caption)

	// The model is fast: its affordable rates run to hundreds of thousands
	// a second, and their ticks still sit clear of the axis label.
	type overlap struct {
		Widest string  `json:"widest"`
		Left   float64 `json:"left"`
		Label  float64 `json:"label"`
	}
	for _, chart := range []string{"knee", "latency"} {
		o := eval[overlap](t, b, `(() => {
  const svg = document.querySelector('`+sel+` svg[data-chart="`+chart+`"]');
  const ticks = [...svg.querySelectorAll('text.tick[text-anchor="end"]')];
  const widest = ticks.reduce((a, e) => (e.textContent.length > a.textContent.length ? e : a));
  const label = [...svg.querySelectorAll('text.axis-label')].find((e) => e.hasAttribute('transform'));
  return { widest: widest.textContent, left: Math.min(...ticks.map((e) => e.getBoundingClientRect().left)), label: label.getBoundingClientRect().right };
})()`)
		require.GreaterOrEqual(t, o.Left, o.Label, "%s chart: the y tick %q runs under the axis label", chart, o.Widest)
		if chart == "knee" {
			require.GreaterOrEqual(t, len(o.Widest), len("100,000"), "the rates are that large")
		}
	}
	screenshot(t, b, filepath.Join(screenshotDir(t), "profile-shapes.png"))
}
