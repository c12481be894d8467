package web_test

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// TestPageWorksBehindAProxyPath serves the daemon as a reverse proxy
// (nginx's `location /gpuletd/ { proxy_pass http://127.0.0.1:8700/; }`)
// does, under a path, with nothing answered outside it: in a real
// browser the page loads its files, reads the status, follows the events,
// opens a profile, downloads a backup and re-plans, each through that path.
func TestPageWorksBehindAProxyPath(t *testing.T) {
	browserPath := chromium(t)
	d := startDaemonWith(t, []string{"mlp"}, "", nil)
	target, err := url.Parse(d.base)
	require.NoError(t, err)
	var outside syncStrings
	mux := http.NewServeMux()
	mux.Handle("/gpuletd/", http.StripPrefix("/gpuletd", httputil.NewSingleHostReverseProxy(target)))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		outside.add(r.Method + " " + r.URL.Path)
		http.NotFound(w, r)
	})
	proxy := httptest.NewServer(mux)
	t.Cleanup(proxy.Close)

	b := startBrowser(t, browserPath)
	b.run(t, chromedp.Navigate(proxy.URL+"/gpuletd/"))
	require.Eventually(t, func() bool {
		return eval[int](t, b, `document.querySelectorAll('#models-table tbody tr[data-model="mlp"]').length`) == 1 &&
			eval[int](t, b, `document.querySelectorAll('#events li').length`) > 0 &&
			eval[string](t, b, `document.getElementById('conn').dataset.state`) == "live"
	}, 30*time.Second, 100*time.Millisecond, "the page shows mlp and its events; outside the path: %q; logs:\n%s", outside.all(), d.logs)

	type answer struct {
		Href   string `json:"href"`
		Status int    `json:"status"`
	}
	backup := eval[answer](t, b, `(async () => {
  const a = document.getElementById('backup');
  return { href: a.href, status: (await fetch(a.href)).status };
})()`)
	require.Equal(t, answer{Href: proxy.URL + "/gpuletd/api/v1/backup", Status: 200}, backup)

	b.run(t, chromedp.Click(chromedp.CSS(`#profile-mlp > summary`)),
		chromedp.WaitVisible(chromedp.CSS(`#profile-mlp svg[data-chart="latency"]`)))

	result := func() string { return eval[string](t, b, `document.getElementById('action-result').textContent`) }
	b.run(t, chromedp.Click(chromedp.CSS(`#reorganize`)))
	require.Eventually(t, func() bool { return strings.HasPrefix(result(), "Re-planned at ") },
		30*time.Second, 100*time.Millisecond, "the re-plan answers: %q", result())

	require.Empty(t, outside.all(), "the page asked for nothing outside its path")
	require.Empty(t, b.problems(), "no console errors")
}

// syncStrings collects strings from the proxy's handlers.
type syncStrings struct {
	mu  sync.Mutex
	got []string
}

func (s *syncStrings) add(v string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.got = append(s.got, v)
}

func (s *syncStrings) all() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.got...)
}
