package web_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// drawnGpulet is one gpu-let block as the page drew it.
type drawnGpulet struct {
	Device string  `json:"device"`
	ID     string  `json:"gpulet"`
	Size   int     `json:"size"`
	State  string  `json:"state"`
	Models string  `json:"models"`
	Label  string  `json:"label"`
	Width  float64 `json:"width"` // the block's width on screen, px
	Bar    float64 `json:"bar"`   // its device bar's width, px
}

// drawnJS reads the gpu-let blocks off the page.
const drawnJS = `[...document.querySelectorAll('#devices svg.bar g.gpulet')].map((g) => ({
  device: g.dataset.device, gpulet: g.dataset.gpulet, size: +g.dataset.size, state: g.dataset.state,
  models: g.dataset.models, label: g.getAttribute('aria-label'),
  width: g.querySelector('rect.block').getBoundingClientRect().width,
  bar: g.ownerSVGElement.querySelector('rect.track').getBoundingClientRect().width,
}))`

// blockGap is the gap the page leaves between blocks, taken from each
// block's own width (partitions.js GAP).
const blockGap = 2

func pagePartitions(gs []drawnGpulet) []string {
	out := make([]string, 0, len(gs))
	for _, g := range gs {
		out = append(out, fmt.Sprintf("%s %s %d %s %s", g.Device, g.ID, g.Size, g.State, g.Models))
	}
	slices.Sort(out)
	return out
}

// waitPageMatches waits until the page draws the partitions that GET
// /api/v1/status reports, and (when differFrom is given) those are not
// differFrom. It returns that status.
func waitPageMatches(t *testing.T, b *browser, d *daemon, differFrom []string) (apiStatus, []drawnGpulet) {
	t.Helper()
	var api, page []string
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		st, err := d.status()
		require.NoError(t, err)
		drawn := eval[[]drawnGpulet](t, b, drawnJS)
		api, page = st.partitions(), pagePartitions(drawn)
		slices.Sort(api)
		if slices.Equal(api, page) && (differFrom == nil || !slices.Equal(api, differFrom)) {
			return st, drawn
		}
		time.Sleep(250 * time.Millisecond)
	}
	t.Fatalf("the page does not show the daemon's partitions:\napi:  %q\npage: %q\nnot:  %q", api, page, differFrom)
	return apiStatus{}, nil
}

// checkDrawing checks the blocks against the status: to scale, labelled
// with device, size, models and batches; the models table lists the same
// models and placements.
func checkDrawing(t *testing.T, b *browser, st apiStatus, drawn []drawnGpulet) {
	t.Helper()
	devs := eval[[]string](t, b, `[...document.querySelectorAll('#devices article.device')].map((a) => a.dataset.device)`)
	var want []string
	for _, dv := range st.Devices {
		want = append(want, dv.ID)
	}
	require.Equal(t, want, devs, "one bar per device, in the inventory's order")
	byID := map[string]drawnGpulet{}
	for _, g := range drawn {
		byID[g.ID] = g
	}
	for _, g := range st.Gpulets {
		p, ok := byID[g.ID]
		require.True(t, ok, "gpu-let %s is drawn", g.ID)
		require.InDelta(t, float64(g.Size)/100, (p.Width+blockGap)/p.Bar, 0.01,
			"gpu-let %s (%d%%) is %.1f px of a %.1f px bar", g.ID, g.Size, p.Width, p.Bar)
		require.True(t, strings.HasPrefix(p.Label, fmt.Sprintf("GPU %s: gpu-let %d%%", g.Device, g.Size)), p.Label)
		for _, m := range g.Models {
			require.Contains(t, p.Label, fmt.Sprintf("%s batch %d at", m.Name, m.Batch))
		}
		if g.State == "ready" {
			require.NotNil(t, g.Memory, "%s: a ready gpu-let's executor runs", g.ID)
			require.Regexp(t, `; holds [0-9.,]+ (MiB|GiB) of memory$`, p.Label, "what its executor holds")
		}
	}
	type row struct {
		Name   string `json:"name"`
		Placed string `json:"placed"`
	}
	rows := eval[[]row](t, b, `[...document.querySelectorAll('#models-table tbody tr[data-model]')].map((tr) => ({
  name: tr.dataset.model, placed: tr.querySelector('td.placed').textContent }))`)
	require.Len(t, rows, len(st.Models))
	for i, m := range st.Models {
		require.Equal(t, m.Name, rows[i].Name)
		require.Equal(t, strings.Join(m.PlacedOn, ", "), rows[i].Placed, "where %s is placed", m.Name)
	}
}

// checkProfile opens a model's L(b,p) by clicking it and compares the
// chart with GET /api/v1/models/{m}/profile: a curve per size, the knee.
func checkProfile(t *testing.T, b *browser, d *daemon, model string) {
	t.Helper()
	var doc struct {
		Profiles []struct {
			DeviceType string `json:"device_type"`
			Points     []struct {
				Size int `json:"size"`
			} `json:"points"`
			KneeSize     int     `json:"knee_size"`
			MemoryMB     float64 `json:"memory_mb"`
			MemorySource string  `json:"memory_source"`
		} `json:"profiles"`
	}
	require.NoError(t, d.getJSON("/api/v1/models/"+model+"/profile", &doc))
	require.NotEmpty(t, doc.Profiles)
	sel := `#profile-` + model
	b.run(t, chromedp.Click(chromedp.CSS(sel+` > summary`)), chromedp.WaitVisible(chromedp.CSS(sel+` svg[data-chart="latency"]`)))
	captions := eval[[]string](t, b, `[...document.querySelectorAll('`+sel+` figure.profile-fig figcaption')].map((c) => c.textContent)`)
	require.Len(t, captions, len(doc.Profiles))
	for i, p := range doc.Profiles {
		require.Equal(t, "reference set", p.MemorySource, "emulated devices take the reference set's memory")
		require.True(t, strings.HasSuffix(captions[i], fmt.Sprintf("; one copy needs %.0f MB (reference set)", p.MemoryMB)), captions[i])
	}
	type chart struct {
		Type   string `json:"type"`
		Knee   string `json:"knee"`
		Curves []int  `json:"curves"`
		Dot    string `json:"dot"`
	}
	charts := eval[[]chart](t, b, `[...document.querySelectorAll('`+sel+` svg[data-chart="latency"]')].map((svg) => ({
  type: svg.dataset.deviceType, knee: svg.dataset.knee,
  curves: [...svg.querySelectorAll('path.series')].map((p) => +p.dataset.size),
  dot: svg.querySelector('circle.knee-dot')?.dataset.kneeSize ?? '' }))`)
	require.Len(t, charts, len(doc.Profiles))
	for i, p := range doc.Profiles {
		var sizes []int
		for _, pt := range p.Points {
			if !slices.Contains(sizes, pt.Size) {
				sizes = append(sizes, pt.Size)
			}
		}
		slices.Sort(sizes)
		require.Equal(t, p.DeviceType, charts[i].Type)
		require.Equal(t, sizes, charts[i].Curves, "one curve per profiled size")
		require.Equal(t, fmt.Sprint(p.KneeSize), charts[i].Knee)
		require.Equal(t, fmt.Sprint(p.KneeSize), charts[i].Dot, "the knee is marked on its curve")
	}
	knee := eval[string](t, b, `document.querySelector('`+sel+` svg[data-chart="knee"] circle.knee-dot')?.dataset.kneeSize ?? ''`)
	require.Equal(t, fmt.Sprint(doc.Profiles[0].KneeSize), knee, "the rate-vs-size chart marks the knee")
}

// layout is how the page sits in the viewport.
type layout struct {
	Viewport    float64 `json:"viewport"`
	ScrollWidth float64 `json:"scrollWidth"`
	Devices     []struct {
		X float64 `json:"x"`
		Y float64 `json:"y"`
		W float64 `json:"w"`
	} `json:"devices"`
	TableScroll float64  `json:"tableScroll"`
	TableClient float64  `json:"tableClient"`
	OverflowX   string   `json:"overflowX"`
	Landmarks   []string `json:"landmarks"`
}

const layoutJS = `(() => {
  const ts = document.querySelector('#models-table').closest('.table-scroll');
  return {
    viewport: window.innerWidth,
    scrollWidth: document.documentElement.scrollWidth,
    devices: [...document.querySelectorAll('#devices article.device')].map((a) => {
      const r = a.getBoundingClientRect();
      return { x: r.left, y: r.top, w: r.width };
    }),
    tableScroll: ts.scrollWidth, tableClient: ts.clientWidth, overflowX: getComputedStyle(ts).overflowX,
    landmarks: [...document.querySelectorAll('header, main, footer, section[aria-labelledby]')].map((e) => e.tagName.toLowerCase()),
  };
})()`

// viewAt sets the viewport width, waits for the bars to be redrawn to it
// and returns the layout.
func viewAt(t *testing.T, b *browser, width int64) layout {
	t.Helper()
	b.run(t, chromedp.EmulateViewport(width, 900))
	var l layout
	require.Eventually(t, func() bool {
		l = eval[layout](t, b, layoutJS)
		bars := eval[[]float64](t, b, `[...document.querySelectorAll('#devices svg.bar rect.track')].map((r) => r.getBoundingClientRect().right)`)
		for _, right := range bars {
			if right > float64(width) {
				return false
			}
		}
		return l.Viewport == float64(width) && len(bars) > 0
	}, 10*time.Second, 100*time.Millisecond, "bars redrawn for %d px", width)
	return l
}

// screenshotDir is GPULETD_SCREENSHOT_DIR, else the test's artifact
// directory (kept with go test -artifacts).
func screenshotDir(t *testing.T) string {
	if dir := os.Getenv("GPULETD_SCREENSHOT_DIR"); dir != "" {
		require.NoError(t, os.MkdirAll(dir, 0o755))
		return dir
	}
	return t.ArtifactDir()
}

func screenshot(t *testing.T, b *browser, path string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, png, 0o644))
	t.Logf("screenshot: %s", path)
}

// previewOnPage presses the page's Preview button and returns what the
// page says once the preview has answered.
func previewOnPage(t *testing.T, b *browser) string {
	t.Helper()
	b.run(t, chromedp.Click(chromedp.CSS(`#preview`)))
	var said string
	require.Eventually(t, func() bool {
		said = eval[string](t, b, `document.getElementById('action-result').textContent`)
		return strings.HasPrefix(said, "Reorganizing now would") || strings.HasPrefix(said, "Could not preview")
	}, 30*time.Second, 100*time.Millisecond, "the preview answers")
	return said
}

// previewSteps are the steps the page lists after a preview.
func previewSteps(t *testing.T, b *browser) []string {
	t.Helper()
	return eval[[]string](t, b, `document.getElementById('preview-steps').hidden ? [] :
  [...document.querySelectorAll('#preview-steps li')].map((li) => li.textContent)`)
}

func TestAdminPageInBrowser(t *testing.T) {
	browserPath := chromium(t)
	d := startDaemon(t)
	b := startBrowser(t, browserPath)
	shots := screenshotDir(t)
	defer func() {
		if t.Failed() {
			b.logConsole(t)
		}
	}()

	b.run(t, chromedp.EmulateViewport(1280, 900), chromedp.Navigate(d.base+"/"))
	before, drawn := waitPageMatches(t, b, d, nil)
	checkDrawing(t, b, before, drawn)
	// Everything below happens on this one load of the page.
	require.True(t, eval[bool](t, b, `window.gpuletdMarker = 'loaded once'; true`))
	require.Equal(t, "off (grpc_listen is empty)", eval[string](t, b, `document.querySelector('#summary [data-key="grpc"] dd').textContent`),
		"the daemon under test has no gRPC listener")
	require.Regexp(t, `^127\.0\.0\.1:[1-9]\d* \(/metrics alone\)$`, eval[string](t, b, `document.querySelector('#summary [data-key="metrics"] dd').textContent`),
		"the daemon under test has a metrics listener of its own, on any free port: the page says the one it took")
	require.Regexp(t, `^\d+ of 1024 open \(limits\.max_connections\)$`, eval[string](t, b, `document.querySelector('#summary [data-key="connections"] dd').textContent`),
		"the page's own connections, against the default cap")
	require.Regexp(t, `^(0|[\d.]+ [KMG]iB) of 256 MiB \(limits\.max_inflight_bytes\)`, eval[string](t, b, `document.querySelector('#summary [data-key="request-bytes"] dd').textContent`),
		"the request bytes in flight, against the default budget")
	checkProfile(t, b, d, "resnet18")
	b.run(t, chromedp.Click(chromedp.CSS(`#models-table a[href="#profile-lenet5"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#profile-lenet5 svg[data-chart="latency"]`)))
	b.run(t, chromedp.Click(chromedp.CSS(`#profiles-all`)))
	require.Eventually(t, func() bool {
		return eval[int](t, b, `document.querySelectorAll('#profiles details[open] svg[data-chart="latency"]').length`) == len(pageModels)
	}, 10*time.Second, 100*time.Millisecond, "Open all draws every model's curves")

	// The page's own button re-plans (POST /api/v1/reorganize) and the
	// summary shows the manual plan.
	b.run(t, chromedp.Click(chromedp.CSS(`#reorganize`)))
	require.Eventually(t, func() bool {
		return strings.HasPrefix(eval[string](t, b, `document.getElementById('action-result').textContent`), "Re-planned at") &&
			strings.HasSuffix(eval[string](t, b, `document.querySelector('#summary [data-key="planned"] dd').textContent`), "(manual)")
	}, 30*time.Second, 100*time.Millisecond, "the button re-plans and the page says so")
	before, drawn = waitPageMatches(t, b, d, nil)
	require.Equal(t, "manual", before.PlanReason)
	checkDrawing(t, b, before, drawn)
	// Previewed at the same rates, the plan just applied changes nothing.
	require.Equal(t, "Reorganizing now would change nothing.", previewOnPage(t, b))
	require.Empty(t, previewSteps(t, b))

	// Drive lenet5 hard: its rate surges past what the plan assigns it and
	// the daemon re-plans. The page must show the new cut without a reload.
	lastEvent := eval[int](t, b, `Math.max(0, ...[...document.querySelectorAll('#events li')].map((li) => +li.dataset.id))`)
	beforeParts := before.partitions()
	slices.Sort(beforeParts)
	ctx, stop := context.WithCancel(context.Background())
	codes := make(chan map[int]int, 1)
	go func() { codes <- d.drive(ctx, "lenet5", 8) }()
	replanned := false
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline) && !replanned; time.Sleep(200 * time.Millisecond) {
		st, err := d.status()
		require.NoError(t, err)
		parts := st.partitions()
		slices.Sort(parts)
		replanned = st.Reorganizations > before.Reorganizations && !slices.Equal(parts, beforeParts)
	}
	stop()
	t.Logf("lenet5 answers by status code: %v", <-codes)
	require.True(t, replanned, "the surge re-planned the daemon onto other gpu-lets; logs:\n%s", d.logs)

	after, drawn := waitPageMatches(t, b, d, beforeParts)
	checkDrawing(t, b, after, drawn)
	require.Equal(t, "loaded once", eval[string](t, b, `window.gpuletdMarker ?? 'reloaded'`), "no reload")
	type event struct {
		ID    int    `json:"id"`
		Kind  string `json:"kind"`
		Attrs string `json:"attrs"`
	}
	events := eval[[]event](t, b, `[...document.querySelectorAll('#events li')].map((li) => ({
  id: +li.dataset.id, kind: li.dataset.kind, attrs: li.querySelector('.attrs')?.textContent ?? '' }))`)
	require.True(t, slices.ContainsFunc(events, func(e event) bool {
		return e.ID > lastEvent && e.Kind == "reorganize" && strings.Contains(e.Attrs, "lenet5")
	}), "the live feed shows the re-plan: %+v", events)
	require.Equal(t, fmt.Sprint(after.Reorganizations),
		eval[string](t, b, `document.querySelector('#summary [data-key="reorganizations"] dd').textContent`))
	// With lenet5's estimate falling since the surge ended, a preview plans
	// other rates: it lists its steps, and applies none of them.
	if said := previewOnPage(t, b); said != "Reorganizing now would change nothing." {
		require.Equal(t, "Reorganizing now would, in this order:", said)
		steps := previewSteps(t, b)
		t.Logf("a preview after the surge: %q", steps)
		require.NotEmpty(t, steps)
		for _, step := range steps {
			// gpulet.PlanDiff.Steps' forms: "load mlp, vgg on emu0 …"
			// names its models before its GPU.
			require.Regexp(t, `^((start|resize|retune|stop) emu\d|(load|unload) .+ (on|from) emu\d)`, step)
		}
		st, err := d.status()
		require.NoError(t, err)
		require.Equal(t, after.Reorganizations, st.Reorganizations, "the preview applied nothing")
	}

	// A light load on mlp so the screenshots show measured latencies.
	light, stopLight := context.WithTimeout(context.Background(), 3*time.Second)
	defer stopLight()
	t.Logf("mlp answers by status code: %v", d.drive(light, "mlp", 1))

	// Wide: the two devices side by side, nothing wider than the window.
	wide := viewAt(t, b, 1280)
	require.LessOrEqual(t, wide.ScrollWidth, wide.Viewport)
	require.Len(t, wide.Devices, 2)
	require.Equal(t, wide.Devices[0].Y, wide.Devices[1].Y, "devices side by side at 1280 px")
	require.Equal(t, []string{"header", "main", "section", "section", "section", "section", "section", "footer"}, wide.Landmarks)
	require.Equal(t, "No pipelines are served.", eval[string](t, b, `document.querySelector('#pipelines-table tbody').textContent`))
	checkPipelineRow(t, b)
	checkModelWarning(t, b)
	checkAttainmentBadges(t, b)
	checkDeviceMemory(t, b)
	checkReadyWords(t, b)
	checkBackupLink(t, b)
	checkEventFilter(t, b)
	checkEventModelFilter(t, b)
	type a11y struct {
		Unlabelled int      `json:"unlabelled"`
		NoScope    int      `json:"noScope"`
		Headings   []string `json:"headings"`
	}
	acc := eval[a11y](t, b, `({
  unlabelled: [...document.querySelectorAll('[role="img"]')].filter((e) => !(e.getAttribute('aria-label') || '').trim()).length,
  noScope: [...document.querySelectorAll('thead th')].filter((th) => th.getAttribute('scope') !== 'col').length,
  headings: [...document.querySelectorAll('h1, h2')].map((h) => h.tagName.toLowerCase() + ' ' + h.textContent) })`)
	require.Zero(t, acc.Unlabelled, "every drawing has an accessible name")
	require.Zero(t, acc.NoScope, "column headers say so")
	require.Equal(t, []string{"h1 gpuletd", "h2 Devices and gpu-lets", "h2 Models", "h2 Pipelines", "h2 Latency profiles L(b,p)", "h2 Events"}, acc.Headings)
	screenshot(t, b, filepath.Join(shots, "admin-page-1280.png"))

	// Phone: bars stack, the page does not scroll sideways, the table does.
	narrow := viewAt(t, b, 390)
	require.LessOrEqual(t, narrow.ScrollWidth, narrow.Viewport, "the page fits 390 px")
	require.Len(t, narrow.Devices, 2)
	require.Equal(t, narrow.Devices[0].X, narrow.Devices[1].X, "devices stacked at 390 px")
	require.Greater(t, narrow.Devices[1].Y, narrow.Devices[0].Y)
	require.Equal(t, "auto", narrow.OverflowX)
	require.Greater(t, narrow.TableScroll, narrow.TableClient, "the models table scrolls sideways")
	screenshot(t, b, filepath.Join(shots, "admin-page-390.png"))

	require.Empty(t, b.problems(), "console errors")
}

// checkPipelineRow renders a pipeline under accuracy scaling, as the status
// gives it, with the page's own module into a table of its own: the row
// shows the accuracy served, and its title the plan and the variant mix,
// and its name what its response cache answered and its configuration's
// notes; drawn into the page's table too, it fits the window.
func checkPipelineRow(t *testing.T, b *browser) {
	t.Helper()
	type cell struct {
		Text    string `json:"text"`
		Title   string `json:"title"`
		Scaling string `json:"scaling"`
		Cells   int    `json:"cells"`
		Headers int    `json:"headers"`
		Scroll  int    `json:"scroll"`
		Client  int    `json:"client"`
		Name    string `json:"name"`
		Cached  string `json:"cached"`
		Steps   string `json:"steps"`
		Warning string `json:"warning"`
		Branch  string `json:"branch"`
		// BranchName and BranchNotes: the name cell of the pipeline whose
		// configuration has a note, and the note.
		BranchName  string `json:"branchName"`
		BranchNotes string `json:"branchNotes"`
	}
	got := eval[cell](t, b, `(async () => {
  const { renderPipelines } = await import('/assets/pipelines.js');
  // A pipeline whose first two steps run at once.
  const branch = document.createElement('tbody');
  renderPipelines(branch, { pipelines: [{ name: 'b', ready: true, steps: ['crowd', 'spotter', 'labeler'], beside: [false, true, false], slo_ms: 100, recent: {},
    config_notes: ['ensemble_scheduling.step[0] runs the pipeline find: its step runs in its place'] }] });
  const status = { pipelines: [{ name: 'spot-and-label', ready: true, steps: ['spotter', 'labeler'], fanout: 'objects', fanout_rows: 4.25, rate: 1234.5, slo_ms: 250,
    recent: { requests: 4096, slo_attainment: 0.996, p50_ms: 40.25, p99_ms: 190.5, violations: 16 },
    scaling: { scaling: 'accuracy', planned_accuracy: 0.91, accuracy: 0.905, served: 10, rerouted: 2,
      mix: [[{ model: 'spotter', share: 1 }], [{ model: 'labeler', share: 0.6 }, { model: 'labeler-lite', share: 0.4 }]] },
    response_cache: { hits: 1500, misses: 20 },
    warnings: ['REST and gRPC requests are refused as too large: a request of one row carries 3136 bytes of tensor data'] }] };
  const tbody = document.createElement('tbody');
  renderPipelines(tbody, status);
  const td = tbody.querySelector('td[data-scaling]');
  // The same row in the page's own table (the next refresh redraws it).
  const live = document.querySelector('#pipelines-table tbody');
  renderPipelines(live, status);
  const ts = live.closest('.table-scroll');
  const name = tbody.querySelector('th');
  return { text: td.textContent, title: td.title, scaling: td.dataset.scaling, cells: tbody.querySelector('tr').children.length,
    headers: document.querySelectorAll('#pipelines-table thead th').length, scroll: ts.scrollWidth, client: ts.clientWidth,
    name: name.textContent, cached: name.querySelector('.config-notes').title,
    steps: tbody.querySelector('td.steps').textContent, warning: tbody.querySelector('td.steps .warning').title,
    branch: branch.querySelector('td.steps').textContent, branchName: branch.querySelector('th').textContent,
    branchNotes: branch.querySelector('th [data-notes]').title };
})()`)
	require.Equal(t, "crowd + spotter → labeler", got.Branch, "steps that run at once are joined by +")
	require.Equal(t, "b (1 note)", got.BranchName, "its name counts its configuration's notes")
	require.Equal(t, "ensemble_scheduling.step[0] runs the pipeline find: its step runs in its place", got.BranchNotes)
	require.Equal(t, "accuracy", got.Scaling)
	require.Contains(t, got.Text, "90.5")
	require.Contains(t, got.Title, "accuracy scaling, expected 91.0%")
	require.Contains(t, got.Title, "labeler 60")
	require.Contains(t, got.Title, "labeler-lite 40")
	require.Contains(t, got.Title, "2 step requests rerouted")
	require.Equal(t, got.Headers, got.Cells, "one cell per column")
	require.LessOrEqual(t, got.Scroll, got.Client, "a pipeline's row fits a 1280 px window: its steps wrap")
	require.Equal(t, "spot-and-label (1,500 cached)", got.Name, "its name says what its response cache answered")
	require.Equal(t, "response cache: 1500 hits, 20 misses", got.Cached)
	require.Equal(t, "spotter → labeler (each row of objects its own request; 4.3 rows a request lately) (REST and gRPC requests are refused as too large)", got.Steps,
		"the steps say what keeps the pipeline from serving")
	require.Equal(t, "REST and gRPC requests are refused as too large: a request of one row carries 3136 bytes of tensor data", got.Warning)
}

// checkDeviceMemory renders an NVIDIA GPU into a panel of its own: its
// line says how much of its memory the driver has in use and its power
// draw; an emulated GPU's, what its executors' loads hold, and no power. A
// gpu-let's placement says how many of its model's requests failed there.
func checkDeviceMemory(t *testing.T, b *browser) {
	t.Helper()
	got := eval[[]string](t, b, `(async () => {
  const { Devices } = await import('/assets/partitions.js');
  const root = document.createElement('div');
  document.body.append(root);
  const gib = 2 ** 30;
  new Devices(root).render({ devices: [
    { id: 'gpu0', kind: 'nvidia', type: 'h100-80gb-hbm3', name: 'NVIDIA H100 80GB HBM3', backend: 'mps', health: 'ok', memory_total: 80 * gib, memory_free: 68 * gib,
      power: { watts: 251.46, limit_watts: 700, energy_joules: 1234 } },
    { id: 'emu0', kind: 'emulated', type: 'igniter-v100', name: 'Emulated igniter-v100', backend: 'mps', health: 'ok', memory_total: 16 * gib, memory_free: 15.5 * gib },
    { id: 'gpu1', kind: 'nvidia', type: 'h100-80gb-hbm3', name: 'NVIDIA H100 80GB HBM3', backend: 'mps', health: 'failed',
      health_detail: 'the GPU is lost, fallen off the bus' },
  ], gpulets: [], models: [] });
  const lines = [...root.querySelectorAll('.dev-meta')].map((p) => p.textContent);
  root.remove();
  return lines;
})()`)
	require.Len(t, got, 3)
	require.Contains(t, got[0], " · 12 GiB in use · drawing 251 W of 700 W")
	require.NotContains(t, got[0], "health")
	require.Contains(t, got[1], " · 512 MiB in use")
	require.NotContains(t, got[1], "drawing", "a device the driver gives no power for says none")
	require.Contains(t, got[2], " · health: failed (the GPU is lost, fallen off the bus)", "a failed device says why")

	// The CPU device's line says its cores, and of how many where a CPU
	// limit narrowed them.
	cores := eval[[]string](t, b, `(async () => {
  const { cpuCores } = await import('/assets/partitions.js');
  return [
    cpuCores({ kind: 'cpu', cores: [0, 1] }),
    cpuCores({ kind: 'cpu', cores: [0], cpu_limit: 1.5, online_cores: 16 }),
    String(cpuCores({ kind: 'nvidia' })),
  ];
})()`)
	require.Equal(t, []string{"2 cores", "1 of 16 cores: the CPU limit of 1.5 CPUs pays for 1", "null"}, cores)

	// A placement whose requests failed on its gpu-let says how many, and
	// one whose batches ran well over their profiled time says so; one
	// without either says nothing of them.
	placed := eval[[]string](t, b, `(async () => {
  const { Devices } = await import('/assets/partitions.js');
  const root = document.createElement('div');
  document.body.append(root);
  new Devices(root).render({ devices: [
    { id: 'emu0', kind: 'emulated', type: 'igniter-v100', name: 'Emulated igniter-v100', backend: 'mps', health: 'ok' },
  ], gpulets: [{ id: 'emu0-100-1', device: 'emu0', size: 100, state: 'ready', busy_ratio: 0.5, models: [
    { name: 'alexnet', batch: 8, rate: 46, worst_ms: 170, slo_ms: 214, mean_batch: 5.2, requests: 2700, failed: 1048, batch_time_factor: 2.64, slow_batches: true },
    { name: 'ssd', batch: 2, rate: 9, worst_ms: 900, slo_ms: 3641, mean_batch: 1.4, requests: 540, failed: 0, batch_time_factor: 1.04 },
  ] }], models: [] });
  const lines = [...root.querySelectorAll('.gl-list li li')].map((li) => li.textContent);
  root.remove();
  return lines;
})()`)
	require.Len(t, placed, 2)
	require.Contains(t, placed[0], " · mean batch 5.2 · 1,048 failed here · batches 2.6× their profiled time · ")
	require.NotContains(t, placed[1], "failed")
	require.NotContains(t, placed[1], "profiled", "batches within the jitter the scheduler is built for")
}

// checkModelWarning renders a model row whose batch of one is predicted past
// its SLO on one of its gpu-lets and whose input is above the request limit:
// the placement says both, the warnings are its title; and a Triton repository's rows into the page's table, which fit.
func checkModelWarning(t *testing.T, b *browser) {
	t.Helper()
	type cell struct {
		Text  string `json:"text"`
		Title string `json:"title"`
	}
	got := eval[cell](t, b, `(async () => {
  const { renderModels } = await import('/assets/models.js');
  const tbody = document.createElement('tbody');
  renderModels(tbody, { models: [{ name: 'lenet5', ready: true, slo_ms: 5, placed_on: ['gpu0-20-1'], recent: {},
    warnings: ['refused, ℓ(1) > SLO on gpu0-20-1: 6.53ms > 5ms (overhead 6.2ms)', 'every request is refused: input "input" alone takes 3136 bytes'] }] });
  const warning = tbody.querySelector('td.placed .warning');
  return { text: tbody.querySelector('td.placed').textContent, title: warning ? warning.title : '' };
})()`)
	require.Equal(t, "gpu0-20-1 (refused, ℓ(1) > SLO on gpu0-20-1; every request is refused)", got.Text)
	require.Equal(t, "refused, ℓ(1) > SLO on gpu0-20-1: 6.53ms > 5ms (overhead 6.2ms)\nevery request is refused: input \"input\" alone takes 3136 bytes", got.Title)

	// A model that enables the response cache says on its name how many
	// requests it answered, or why it is off; a stateful model how many
	// sequences are live; one ONNX Runtime opens with custom operators or
	// fewer graph optimizations, that; one with priority levels, how many.
	names := eval[[]cell](t, b, `(async () => {
  const { renderModels } = await import('/assets/models.js');
  const tbody = document.createElement('tbody');
  renderModels(tbody, { models: [
    { name: 'a', ready: true, recent: {}, response_cache: { hits: 232367, misses: 1004, rate: 5355 } },
    { name: 'b', ready: true, recent: {}, response_cache: { hits: 0, misses: 0, off: 'the node keeps none (response_cache.size 0)' } },
    { name: 'c', ready: true, recent: {} },
    { name: 'd', ready: true, recent: {}, sequences: { live: 3, max: 4096, idle_ms: 5000, controls: ['START (start)'], states: ['ACC from ACC_NEXT'] } },
    { name: 'e', ready: true, recent: {}, onnxruntime: { op_libraries: ['/m/e/libops.so'], graph_optimization: 'basic' } },
    { name: 'f', ready: true, recent: {}, onnxruntime: { graph_optimization: 'extended' } },
    { name: 'g', ready: true, recent: {}, priority_levels: 2, default_priority_level: 2 }] });
  return [...tbody.querySelectorAll('th')].map((th) => {
    const note = th.querySelector('.config-notes');
    return { text: th.textContent, title: note ? note.title : '' };
  });
})()`)
	// A model the miss rule gave more headroom says so beside its rate.
	assigned := eval[cell](t, b, `(async () => {
  const { renderModels } = await import('/assets/models.js');
  const tbody = document.createElement('tbody');
  renderModels(tbody, { models: [{ name: 'alexnet', ready: true, recent: {}, assigned_rate: 78, extra_headroom: 0.25 }] });
  const td = tbody.querySelectorAll('td')[2], note = td.querySelector('.extra-headroom');
  return { text: td.textContent, title: note ? note.title : '' };
})()`)
	require.Equal(t, cell{"78 (+25% room)", "planned with 25% more headroom: it missed its SLO on a plan that held none of its load back (this fades while it stays within)"}, assigned)
	require.Equal(t, []cell{
		{"a (232,367 cached)", "response cache: 232367 hits, 1004 misses; 5,355/s now, outside the model's rate (no gpu-let runs them)"},
		{"b (cache off)", "response cache enabled, but off: the node keeps none (response_cache.size 0)"},
		{"c", ""},
		{"d (3 sequences)", "stateful (sequence_batching): 3 live of at most 4096, each ended after 5 s idle; gpuletd fills START (start), ACC from ACC_NEXT"},
		{"e (custom ops)", "onnxruntime: custom operators from /m/e/libops.so; basic graph optimizations only"},
		{"f (extended graph)", "onnxruntime: extended graph optimizations only"},
		{"g (2 levels)", "priority levels: 2, 1 the highest; a request that names none is at level 2; at overload the lower levels give way (shed_priority)"},
	}, names)

	// A Triton repository's models, drawn into the page's own table (the
	// next refresh redraws it), fit a 1 280 px window: the ignored fields'
	// count goes under the name.
	type fit struct {
		Scroll int `json:"scroll"`
		Client int `json:"client"`
	}
	f := eval[fit](t, b, `(async () => {
  const { renderModels } = await import('/assets/models.js');
  const live = document.querySelector('#models-table tbody');
  const model = (name) => ({ name, ready: true, rate: 180.25, assigned_rate: 1234.5, slo_ms: 100, slo_from: 'default_slo',
    placed_on: ['cpu-50-1'], config_notes: ['dynamic_batching ignored', 'instance_group ignored'],
    recent: { requests: 4096, slo_attainment: 0.996, p50_ms: 0.297, p99_ms: 14.16, mean_batch: 2.01, violations: 16 } });
  renderModels(live, { models: [model('labeler-lite'), model('spotter')] });
  const ts = live.closest('.table-scroll');
  return { scroll: ts.scrollWidth, client: ts.clientWidth };
})()`)
	require.LessOrEqual(t, f.Scroll, f.Client, "the models table fits a 1280 px window")
}

// checkAttainmentBadges renders models whose SLO attainment lies just
// under a grade's bound: the number on the badge never reads as the grade
// above its colour (98.96% was "99%" in the colour of 90–99%).
func checkAttainmentBadges(t *testing.T, b *browser) {
	t.Helper()
	type badge struct {
		Text  string `json:"text"`
		Class string `json:"class"`
	}
	got := eval[[]badge](t, b, `(async () => {
  const { renderModels } = await import('/assets/models.js');
  const tbody = document.createElement('tbody');
  const model = (name, a) => ({ name, ready: true, recent: { requests: 4096, slo_attainment: a, p50_ms: 1, p99_ms: 2 } });
  renderModels(tbody, { models: [model('a', 0.9896), model('b', 0.99), model('c', 0.8996), model('d', 0.29), model('e', 0.99996), model('f', 1), model('g', 0.057)] });
  return [...tbody.querySelectorAll('span.badge')].map((s) => ({ text: s.textContent, class: s.className }));
})()`)
	require.Equal(t, []badge{
		{"98.9%", "badge att-warn"}, {"99.0%", "badge att-good"}, {"89%", "badge att-bad"}, {"29%", "badge att-bad"},
		{"99.9%", "badge att-good"}, {"100%", "badge att-good"}, {"5.7%", "badge att-bad"},
	}, got)
}

// checkReadyWords: while the start profiles, the summary's Ready row says
// which job runs before what it waits for.
func checkReadyWords(t *testing.T, b *browser) {
	t.Helper()
	got := eval[[]string](t, b, `(async () => {
  const { readyWords } = await import('/assets/summary.js');
  return [
    readyWords({ ready: true }),
    readyWords({ ready: false, profiling: { model: 'resnet18', device: 'cpu', profile: 3, of: 4 }, waiting_for: ['lenet5', 'resnet18'] }),
    readyWords({ ready: false, waiting_for: ['lenet5'] }),
    readyWords({ ready: false, profiling: { model: 'vgg', device: 'cpu', beside: true, queued: 1 }, waiting_for: ['vgg'] }),
  ];
})()`)
	require.Equal(t, []string{"yes", "no (profiling resnet18 on cpu, 3 of 4; waiting for lenet5, resnet18)", "no (waiting for lenet5)",
		"no (profiling vgg on cpu beside the serving gpu-lets; waiting for vgg)"}, got)
	// A gpuletd profile measuring beside the daemon is said in a row of its own.
	got = eval[[]string](t, b, `(async () => {
  const { besideWords } = await import('/assets/summary.js');
  const { clock } = await import('/assets/dom.js');
  const since = '2026-12-05T08:26:02Z';
  return [besideWords([{ by: 'gpuletd profile (pid 7)', models: ['resnet18'], sha256: 'ab'.repeat(32), device_type: 'cpu', since },
    { by: 'gpuletd profile (pid 8)', models: [], sha256: 'cd'.repeat(32), device_type: 'gpu0', since }]), clock(since)];
})()`)
	require.Equal(t, "gpuletd profile (pid 7): resnet18 on cpu since "+got[1]+"; gpuletd profile (pid 8): a file it does not serve (cdcdcdcdcdcd…) on gpu0 since "+got[1], got[0])
	got = eval[[]string](t, b, `(async () => {
  const { problemWords } = await import('/assets/summary.js');
  return [
    problemWords({ window: '1h0m0s', warnings: 2, errors: 1 }),
    problemWords({ window: '1h0m0s', warnings: 0, errors: 1 }),
    problemWords({ window: '1h0m0s', warnings: 0, errors: 0 }),
    problemWords(undefined),
  ];
})()`)
	require.Equal(t, []string{"2 warnings, 1 error", "1 error", "no warnings", "–"}, got)
	require.Regexp(t, `^(no warnings|\d+ warnings?(, \d+ errors?)?|\d+ errors?)$`,
		eval[string](t, b, `document.querySelector('#summary [data-key="last-hour"] dd').textContent`), "the summary counts them")
	got = eval[[]string](t, b, `(async () => {
  const { upWords } = await import('/assets/summary.js');
  const t0 = Date.parse('2026-12-02T05:00:00Z');
  const since = new Date(t0).toLocaleTimeString('en-GB', { hour12: false });
  return [
    upWords('2026-12-02T05:00:00Z', t0 + 45e3) === '45s (since ' + since + ')' ? 'ok' : upWords('2026-12-02T05:00:00Z', t0 + 45e3),
    upWords('2026-12-02T05:00:00Z', t0 + (3 * 3600 + 12 * 60 + 30) * 1e3).split(' ')[0],
    upWords('2026-12-02T05:00:00Z', t0 + (26 * 3600) * 1e3).split(' ')[0],
    upWords(undefined),
    upWords('0001-01-01T00:00:00Z'),
  ];
})()`)
	require.Equal(t, []string{"ok", "3h12m", "1d2h", "–", "–"}, got)
	got = eval[[]string](t, b, `(async () => {
  const { planWords } = await import('/assets/summary.js');
  return [planWords(undefined), planWords({ schedulable: true }), planWords({ schedulable: false }), planWords({ schedulable: true, spread: true })];
})()`)
	require.Equal(t, []string{"none yet", "every rate placed", "some rate unplaced", "planned for no traffic: every model has an equal share of the GPUs' time"}, got)
	got = eval[[]string](t, b, `(async () => {
  const { capacityWords } = await import('/assets/summary.js');
  return [
    capacityWords({ ratio: 3.42, load: 400, rate: 1368 }),
    capacityWords({ ratio: 620.4, load: 98.4, rate: 59785 }),
    capacityWords({ ratio: 1.8, load: 12000, rate: 21600, at_least: true }),
    capacityWords({ ratio: 0.8, load: 500, rate: 400 }),
    capacityWords({ ratio: 0, load: 7.56, rate: 0 }),
    capacityWords({ ratio: 256, load: 318, rate: 80810, cpu: true }),
    capacityWords({ ratio: 5.3, load: 2004, rate: 10694, cpu: true, executor_path_us: 71.2, daemon_path_us: 1234 }),
    capacityWords({ ratio: 1048576, load: 1, rate: 1048576, at_least: true }),
    capacityWords({ ratio: 98304, load: 2, rate: 196608, cpu: true }, true),
    capacityWords(undefined),
  ];
})()`)
	require.Equal(t, []string{"3.4× the 400 req/s planned for, 1,368 req/s", "620× the 98.4 req/s planned for, 59,785 req/s",
		"≥1.8× the 12,000 req/s planned for, ≥21,600 req/s", "0.8× the 500 req/s planned for: overloaded",
		"none: however light the 7.6 req/s planned for, the plan leaves a model out (the models below say which, and why)",
		"256× the 318 req/s planned for, 80,810 req/s (on the CPU: the models' compute alone, the request path shares its cores)",
		"5.3× the 2,004 req/s planned for, 10,694 req/s (on the CPU: with the executors' 71µs of CPU a request; the daemon's 1.23ms shares the cores too)",
		"≥1,048,576× the 1.0 req/s planned for, ≥1,048,576 req/s",
		"196,608 req/s in all, in the planned mix (on the CPU: the models' compute alone, the request path shares its cores)", "–"}, got)
	got = eval[[]string](t, b, `(async () => {
  const { requestPathWords } = await import('/assets/summary.js');
  return [
    requestPathWords({ per_request_us: 312.4, daemon_us: 239.2, executors_us: 73.2, answered: 19916 }),
    requestPathWords({ per_request_us: 1250, daemon_us: 1250 }),
    requestPathWords(undefined),
  ];
})()`)
	require.Equal(t, []string{"312µs of CPU a request (daemon 239µs, executor 73µs)",
		"1.25ms of the daemon's CPU a request (executors' measured on CPU gpu-lets of one core alone)", "–"}, got)
	got = eval[[]string](t, b, `(async () => {
  const { connectionsWords } = await import('/assets/summary.js');
  return [
    connectionsWords({ open: 3, max: 1024, refused: 0 }),
    connectionsWords({ open: 1024, max: 1024, refused: 85488 }),
    connectionsWords(undefined),
  ];
})()`)
	require.Equal(t, []string{"3 of 1024 open (limits.max_connections)",
		"1024 of 1024 open (limits.max_connections), 85488 refused over it since the start (health checks and scrapes are answered over it)", "–"}, got)
	got = eval[[]string](t, b, `(async () => {
  const { requestBytesWords } = await import('/assets/summary.js');
  const mib = 2 ** 20;
  return [
    requestBytesWords({ held: 0, max: 256 * mib, refused: 0, models: {} }),
    requestBytesWords({ held: 196 * mib, max: 256 * mib, refused: 14502, models: { lenet5: 0.5 * mib, vgg: 195.5 * mib } }),
    requestBytesWords({ held: 240 * mib, max: 256 * mib, refused: 0, models: { a: 60 * mib, b: 60 * mib, c: 100 * mib, d: 20 * mib } }),
    requestBytesWords({ held: 3990, max: 256 * mib, refused: 0, models: { mlp: 3990 } }),
    requestBytesWords({ held: 600, max: 256 * mib, refused: 0, models: { tiny: 600 } }),
    requestBytesWords({ held: 24 * mib, beside: 190 * mib, max: 256 * mib, refused: 0, models: { tokens: 214 * mib } }),
    requestBytesWords(undefined),
  ];
})()`)
	require.Equal(t, []string{"0 of 256 MiB (limits.max_inflight_bytes)",
		"196 MiB of 256 MiB (limits.max_inflight_bytes): vgg 196 MiB, lenet5 512 KiB; 14502 refused for want of room since the start (memory_budget)",
		"240 MiB of 256 MiB (limits.max_inflight_bytes): c 100 MiB, a 60 MiB, b 60 MiB, 1 more",
		"3.9 KiB of 256 MiB (limits.max_inflight_bytes): mlp 3.9 KiB",
		"600 B of 256 MiB (limits.max_inflight_bytes): tiny 600 B",
		"24 MiB of 256 MiB (limits.max_inflight_bytes), and 190 MiB of as much beside them (decoded inputs, outputs): tokens 214 MiB", "–"}, got)
	// A refresh keeps each model's row and its name's cell (the link a
	// reader is pressing) as long as the cell says the same.
	got = eval[[]string](t, b, `(async () => {
  const { renderModels } = await import('/assets/models.js');
  const tbody = document.createElement('tbody');
  document.body.append(tbody);
  const st = (models) => ({ models: models.map(([name, rate, notes]) => ({ name, rate, slo_ms: 5, ready: true, config_notes: notes })) });
  renderModels(tbody, st([['a', 1], ['b', 2]]));
  const [rowA, rowB] = tbody.children;
  const linkA = rowA.querySelector('a');
  const out = [];
  renderModels(tbody, st([['a', 10], ['b', 20]]));
  out.push(String(tbody.children[0] === rowA && rowA.querySelector('a') === linkA && linkA.isConnected));
  out.push(rowA.children[2].textContent);
  renderModels(tbody, st([['b', 20], ['a', 10, ['instance_group ignored']]]));
  out.push(String(tbody.children[0] === rowB && tbody.children[1] === rowA && rowA.querySelector('a') !== linkA));
  out.push(rowA.querySelector('th').textContent);
  renderModels(tbody, st([['a', 10, ['instance_group ignored']]]));
  out.push(String(tbody.children.length) + ' ' + String(rowB.isConnected));
  renderModels(tbody, st([]));
  out.push(tbody.textContent);
  tbody.remove();
  return out;
})()`)
	require.Equal(t, []string{"true", "10", "true", "a (1 ignored)", "1 false", "No models are served."}, got)
	require.Regexp(t, `^(–|≥?[\d.,]+× the [\d.,]+ req/s planned for(, ≥?[\d,]+ req/s( \(on the CPU: .+\))?|: overloaded))$`,
		eval[string](t, b, `document.querySelector('#summary [data-key="capacity"] dd').textContent`), "the summary says the planned capacity")
	require.Regexp(t, `^(–|[\d.]+(µs|ms) of CPU a request \(daemon .+\))$`,
		eval[string](t, b, `document.querySelector('#summary [data-key="request-path"] dd').textContent`), "the summary has the request path's row")
	require.Regexp(t, `^\d+(s|m|h\d+m|d\d+h) \(since .+\)$`,
		eval[string](t, b, `document.querySelector('#summary [data-key="up"] dd').textContent`), "the summary says how long it has run")
	got = eval[[]string](t, b, `(async () => {
  const { memoryWords } = await import('/assets/summary.js');
  return [
    memoryWords({ working_set_bytes: 1.5 * 2 ** 30, limit_bytes: 4 * 2 ** 30, oom_kills: 0 }),
    memoryWords({ working_set_bytes: 3.7 * 2 ** 30, limit_bytes: 4 * 2 ** 30, oom_kills: 2, near_limit: true }),
    memoryWords({ working_set_bytes: 300 * 2 ** 20, oom_kills: 1 }),
    memoryWords(undefined),
  ];
})()`)
	require.Equal(t, []string{"1.5 GiB of a 4 GiB limit (38%)", "3.7 GiB of a 4 GiB limit (93%), near it: at it the kernel kills an executor; 2 out-of-memory kills",
		"300 MiB, no limit; 1 out-of-memory kill", "–"}, got)
	got = eval[[]string](t, b, `(async () => {
  const { cpuMemoryWords } = await import('/assets/summary.js');
  return [
    cpuMemoryWords({ placed_bytes: 1.5 * 2 ** 30, models_bytes: 3.5 * 2 ** 30, from: "the host's 3.6 GiB less the daemon's peak of 70 MiB" }),
    cpuMemoryWords({ placed_bytes: 2 ** 30, models_bytes: 0, from: 'unbounded: neither the host\'s memory nor a memory limit could be read' }),
    cpuMemoryWords(undefined),
  ];
})()`)
	require.Equal(t, []string{"1.5 GiB placed of 3.5 GiB (the host's 3.6 GiB less the daemon's peak of 70 MiB)",
		"1 GiB placed; unbounded: neither the host's memory nor a memory limit could be read", "–"}, got)
	require.Regexp(t, `^(–|([\d.]+ \w?i?B|nothing) placed of [\d.]+ \w?i?B \((the host's|gpuletd's memory limit) .+\))$`,
		eval[string](t, b, `document.querySelector('#summary [data-key="cpu-models"] dd').textContent`), "the summary says the CPU models' memory")
	got = eval[[]string](t, b, `(async () => {
  const { stateWords } = await import('/assets/partitions.js');
  const at = '2026-12-02T12:45:10Z';
  const clock = new Date(at).toLocaleTimeString('en-GB', { hour12: false });
  const next = stateWords({ state: 'restarting', restarts: 2, next_try: at });
  const silent = stateWords({ state: 'stalled', restarts: 0, stalled_since: at });
  return [
    stateWords({ state: 'ready', restarts: 0 }),
    stateWords({ state: 'ready', restarts: 1 }),
    next === 'restarting (2 restarts), tried again at ' + clock ? 'ok' : next,
    silent === 'stalled: silent since ' + clock + ', its requests sent elsewhere' ? 'ok' : silent,
  ];
})()`)
	require.Equal(t, []string{"ready", "ready (1 restart)", "ok", "ok"}, got)
	require.Regexp(t, `^(–|[\d.,]+ [MG]iB(, no limit| of a [\d.,]+ [MG]iB limit \(\d+%\)).*)$`,
		eval[string](t, b, `document.querySelector('#summary [data-key="memory"] dd').textContent`), "the summary says the memory held")
}

// checkBackupLink follows the page's backup link as the browser would
// download it: a SQLite database named for the host and the time.
func checkBackupLink(t *testing.T, b *browser) {
	t.Helper()
	type got struct {
		Status      int    `json:"status"`
		Type        string `json:"type"`
		Disposition string `json:"disposition"`
		Magic       string `json:"magic"`
		Download    bool   `json:"download"`
	}
	g := eval[got](t, b, `(async () => {
  const a = document.getElementById('backup');
  const resp = await fetch(a.href);
  const head = new Uint8Array(await resp.arrayBuffer()).slice(0, 15);
  return { status: resp.status, type: resp.headers.get('content-type'), disposition: resp.headers.get('content-disposition') || '',
    magic: String.fromCharCode(...head), download: a.hasAttribute('download') };
})()`)
	require.Equal(t, got{Status: 200, Type: "application/vnd.sqlite3", Disposition: g.Disposition, Magic: "SQLite format 3", Download: true}, g)
	require.Regexp(t, `^attachment; filename="?gpuletd-.+\.db"?$`, g.Disposition)
}

// checkEventFilter ticks the events' "Warnings and errors only" box: the
// info events leave the list, the others stay; unticked, they come back.
// A warning is added to the list as the feed draws one, so that there is
// one to stay.
func checkEventFilter(t *testing.T, b *browser) {
	t.Helper()
	type shown struct {
		Info     int `json:"info"`
		Problems int `json:"problems"`
	}
	count := func() shown {
		return eval[shown](t, b, `(() => {
  const visible = [...document.querySelectorAll('#events li')].filter((li) => getComputedStyle(li).display !== 'none');
  return { info: visible.filter((li) => li.dataset.severity === 'info').length,
    problems: visible.filter((li) => li.dataset.severity === 'warning' || li.dataset.severity === 'error').length };
})()`)
	}
	require.True(t, eval[bool](t, b, `(() => {
  const li = document.createElement('li');
  li.className = 'ev sev-warning';
  li.dataset.severity = 'warning';
  li.textContent = 'a warning';
  document.getElementById('events').append(li);
  return true;
})()`))
	all := count()
	require.Positive(t, all.Info, "the daemon's starts are info events")
	require.Equal(t, 1, all.Problems)
	b.run(t, chromedp.Click(chromedp.CSS(`#events-problems`)))
	require.Equal(t, shown{Info: 0, Problems: 1}, count(), "ticked: warnings and errors only")
	b.run(t, chromedp.Click(chromedp.CSS(`#events-problems`)))
	require.Equal(t, all, count(), "unticked: all again")
	require.True(t, eval[bool](t, b, `(document.querySelector('#events li:last-child').remove(), true)`))
}

// checkEventModelFilter picks a model in the events' list: only the events
// that name it stay (its executor's start among them); "all" brings the
// others back.
func checkEventModelFilter(t *testing.T, b *browser) {
	t.Helper()
	type shown struct {
		Visible int `json:"visible"`
		Others  int `json:"others"`
	}
	pick := func(model string) shown {
		return eval[shown](t, b, `(() => {
  const sel = document.getElementById('events-model');
  sel.value = `+strconv.Quote(model)+`;
  sel.dispatchEvent(new Event('change'));
  const visible = [...document.querySelectorAll('#events li')].filter((li) => getComputedStyle(li).display !== 'none');
  return { visible: visible.length,
    others: visible.filter((li) => !li.dataset.models.split(' ').includes(`+strconv.Quote(model)+`)).length };
})()`)
	}
	require.Contains(t, eval[[]string](t, b, `[...document.querySelectorAll('#events-model option')].map((o) => o.value)`), "lenet5",
		"the list offers the served models")
	all := eval[int](t, b, `document.querySelectorAll('#events li').length`)
	got := pick("lenet5")
	require.Positive(t, got.Visible, "lenet5's executor started")
	require.Zero(t, got.Others, "only lenet5's events")
	require.Less(t, got.Visible, all)
	require.Equal(t, all, pick("").Visible, "all again")
}
