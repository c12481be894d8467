package web_test

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// TestPageSaysAtWhichShapesAProfileWasMeasured serves the text-like tokens
// model, its ids of any length profiled at the 32 its profile_shapes gives,
// on the CPU: the profile's caption on the page, in a real browser, says
// so, as the profile API's inputs_at does.
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
}
