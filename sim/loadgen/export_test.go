package loadgen

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestExportKeepsEveryRequest: a run asked to export keeps each request it
// counts, when it was sent and answered (a failure with its reason and no
// answer), and the bounds of the windows reported.
func TestExportKeepsEveryRequest(t *testing.T) {
	srv := newFakeServer(t, &fakeServer{delay: func(int64) time.Duration { return 2 * time.Millisecond },
		code: func(n int64) int {
			if n%5 == 0 {
				return http.StatusServiceUnavailable
			}
			return http.StatusOK
		}})
	rep, err := Run(context.Background(), Config{URL: srv.URL, Model: "m", Rate: 200, Duration: 300 * time.Millisecond, Warmup: 100 * time.Millisecond, Seed: 4, Export: true})
	require.NoError(t, err)
	require.Len(t, rep.Exported, int(rep.Sent), "each request counted, none of the warm-up")
	require.False(t, rep.ExportTruncated)
	require.Len(t, rep.Boundaries, 2)
	require.Equal(t, rep.Window, rep.Boundaries[1].Sub(rep.Boundaries[0]))
	failed := 0
	for _, r := range rep.Exported {
		require.False(t, r.Sent.Before(rep.Boundaries[0].Add(-time.Millisecond)), "sent in the window")
		if r.Failed != "" {
			failed++
			require.Equal(t, "503", r.Failed)
			require.True(t, r.Answered.IsZero())
			continue
		}
		require.GreaterOrEqual(t, r.Answered.Sub(r.Sent), 2*time.Millisecond)
	}
	require.Equal(t, int(rep.Failed["503"]), failed)

	// Measured in windows: the three reported alone.
	rep, err = Run(context.Background(), Config{URL: srv.URL, Model: "m", Rate: 200, Duration: 100 * time.Millisecond, Seed: 4, Export: true,
		Windows: &Windows{Stability: 10, MaxTrials: 5}})
	require.NoError(t, err)
	require.Len(t, rep.Exported, int(rep.Sent))
	require.Len(t, rep.Boundaries, 4, "three windows' starts and the last one's end")

	// Without it, nothing is kept.
	rep, err = Run(context.Background(), Config{URL: srv.URL, Model: "m", Rate: 200, Duration: 100 * time.Millisecond, Seed: 4})
	require.NoError(t, err)
	require.Nil(t, rep.Exported)
	require.Nil(t, rep.Boundaries)
}

// TestExportIsBounded: past the bound a window keeps no more requests and
// says that some were left out.
func TestExportIsBounded(t *testing.T) {
	g := &generator{}
	g.exportLeft.Store(2)
	w := newTally()
	for range 3 {
		g.export(w, ExportedRequest{})
	}
	require.Len(t, w.exported, 2)
	require.True(t, w.exportCut)
}
