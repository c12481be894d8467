package loadgen

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestParseShares(t *testing.T) {
	for _, tc := range []struct {
		name  string
		specs []string
		total float64
		want  []Share
		err   string
	}{
		{"equal split", []string{"a", "b"}, 100, []Share{{"a", 50}, {"b", 50}}, ""},
		{"own rates", []string{"a=30", "b=10"}, 0, []Share{{"a", 30}, {"b", 10}}, ""},
		{"scaled to the total", []string{"a=3", "b=1"}, 200, []Share{{"a", 150}, {"b", 50}}, ""},
		{"no rate", []string{"a", "b"}, 0, nil, "no rate"},
		{"some rates", []string{"a=3", "b"}, 10, nil, "every model a rate"},
		{"bad rate", []string{"a=fast"}, 0, nil, `rate "fast"`},
		{"zero rate", []string{"a=0"}, 0, nil, `rate "0"`},
		{"twice", []string{"a", "a"}, 10, nil, "listed twice"},
		{"no name", []string{"=3"}, 0, nil, "give NAME or NAME=RATE"},
		{"none", nil, 10, nil, "no model"},
		{"negative total", []string{"a"}, -1, nil, "rate -1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseShares(tc.specs, tc.total)
			if tc.err != "" {
				require.ErrorIs(t, err, ErrConfig)
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

// TestRunMixSumsModels: two models (on two servers) loaded at once, each on
// its own schedule; the total adds them up.
func TestRunMixSumsModels(t *testing.T) {
	fast := newFakeServer(t, &fakeServer{})
	slow := newFakeServer(t, &fakeServer{delay: func(int64) time.Duration { return 1200 * time.Millisecond }})
	mr, err := RunMix(context.Background(), []Config{
		{URL: fast.URL, Model: "m", Rate: 200, Duration: 300 * time.Millisecond, Seed: 1},
		{URL: slow.URL, Model: "m", Rate: 100, Duration: 300 * time.Millisecond, Seed: 2},
	})
	require.NoError(t, err)
	require.Len(t, mr.Models, 2)
	a, b := mr.Models[0], mr.Models[1]
	require.Equal(t, due(t, 200, 1, 0, 300*time.Millisecond), a.Sent)
	require.Equal(t, due(t, 100, 2, 0, 300*time.Millisecond), b.Sent)
	require.Equal(t, a.Sent, a.WithinSLO)
	require.Zero(t, b.WithinSLO, "the slow server answers after the 1 s SLO")
	tot := mr.Total
	require.Equal(t, 300.0, tot.Rate)
	require.Equal(t, a.Sent+b.Sent, tot.Sent)
	require.Equal(t, a.OK+b.OK, tot.OK)
	require.Equal(t, a.WithinSLO, tot.WithinSLO)
	require.InDelta(t, float64(a.Sent)/float64(a.Sent+b.Sent), tot.Attainment, 1e-12)
	require.InDelta(t, a.Goodput+b.Goodput, tot.Goodput, 1e-9)
}

// TestRunMixNamesTheModelThatCannotStart: an unknown model stops the mix and
// the error names it, not a model that was cancelled because of it.
func TestRunMixNamesTheModelThatCannotStart(t *testing.T) {
	srv := newFakeServer(t, &fakeServer{})
	_, err := RunMix(context.Background(), []Config{
		{URL: srv.URL, Model: "m", Rate: 100, Duration: 10 * time.Second, Seed: 1},
		{URL: srv.URL, Model: "nope", Rate: 100, Duration: 10 * time.Second, Seed: 2},
	})
	require.ErrorIs(t, err, ErrNotFound)
	require.ErrorContains(t, err, "load nope: ")
	_, err = RunMix(context.Background(), nil)
	require.ErrorIs(t, err, ErrConfig)
}
