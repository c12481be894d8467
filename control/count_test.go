package control

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestCount(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	// adds counts n requests evenly from from to to.
	adds := func(c *Count, n int, from, to time.Duration) {
		for i := range n {
			c.Add(from + time.Duration(i)*(to-from)/time.Duration(n))
		}
	}
	type closed struct {
		rate   float64
		judged bool
	}
	tests := []struct {
		name string
		run  func(c *Count) []closed // every Close's, in order
		want []closed
	}{
		{name: "a load from the window's opening is its count over the window, judged at its close",
			run: func(c *Count) []closed {
				adds(c, 40, 0, ms(1000))
				r, j := c.Close(ms(1000), 1)
				return []closed{{r, j}}
			},
			want: []closed{{40, true}}},
		{name: "a load that began 8 s into a 10 s window is measured from its first request",
			run: func(c *Count) []closed {
				adds(c, 80, ms(8000), ms(10000))
				r, j := c.Close(ms(10000), 10)
				return []closed{{r, j}}
			},
			want: []closed{{79 / 2.0, true}}},
		{name: "one that began 0.4 s into a second is its count over the window, judged at the next",
			run: func(c *Count) []closed {
				adds(c, 24, ms(400), ms(1000))
				r1, j1 := c.Close(ms(1000), 1)
				adds(c, 40, ms(1000), ms(2000))
				r2, j2 := c.Close(ms(2000), 1)
				return []closed{{r1, j1}, {r2, j2}}
			},
			want: []closed{{24, false}, {40, true}}},
		{name: "a window after a busy one is measured whole, even if its requests began late",
			run: func(c *Count) []closed {
				adds(c, 10, 0, ms(1000))
				c.Close(ms(1000), 1)
				adds(c, 20, ms(1500), ms(2000))
				r, j := c.Close(ms(2000), 1)
				return []closed{{r, j}}
			},
			want: []closed{{20, true}}},
		{name: "a lone request each other window reads as one over the window, too late in it to judge",
			run: func(c *Count) []closed {
				var out []closed
				for w := range 4 {
					if w%2 == 0 {
						c.Add(ms(1000*w + 100))
					}
					r, j := c.Close(ms(1000*(w+1)), 1)
					out = append(out, closed{r, j})
				}
				return out
			},
			want: []closed{{1, false}, {0, true}, {1, false}, {0, true}}},
		{name: "no requests read as none",
			run: func(c *Count) []closed {
				r, j := c.Close(ms(20000), 20)
				return []closed{{r, j}}
			},
			want: []closed{{0, true}}},
		{name: "a request taken back after the close comes off the next window",
			run: func(c *Count) []closed {
				adds(c, 5, 0, ms(1000))
				r1, j1 := c.Close(ms(1000), 1)
				c.Remove()
				adds(c, 5, ms(1000), ms(2000))
				r2, j2 := c.Close(ms(2000), 1)
				return []closed{{r1, j1}, {r2, j2}}
			},
			want: []closed{{5, true}, {4, true}}},
		{name: "every request taken back reads as none",
			run: func(c *Count) []closed {
				adds(c, 3, ms(100), ms(200))
				for range 4 {
					c.Remove()
				}
				r1, j1 := c.Close(ms(1000), 1)
				c.Add(ms(1500))
				r2, j2 := c.Close(ms(2000), 1)
				return []closed{{r1, j1}, {r2, j2}}
			},
			want: []closed{{0, false}, {0, true}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c Count
			got := tt.run(&c)
			require.Len(t, got, len(tt.want))
			for i, w := range tt.want {
				require.InDelta(t, w.rate, got[i].rate, 1e-9, "close %d", i)
				require.Equal(t, w.judged, got[i].judged, "close %d", i)
			}
		})
	}
}

// A Poisson load that begins at a random moment of a 4 s window (a short
// reorganize period) is measured, on average, at its rate by the first
// window that judges it with a request in it: the one it began in when it
// began at least OnsetSpan before the close, else the next. Counted over
// the whole window, as before Count, the mean read about half the rate.
func TestCountMeasuresALoadThatBeganInTheWindow(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	const window = 4 * time.Second
	for _, rate := range []float64{2, 8, 40} {
		var sum, whole float64
		const runs = 4000
		for range runs {
			var c Count
			at := time.Duration(rng.Float64() * float64(window)) // the onset
			next := func() {
				at += time.Duration(rng.ExpFloat64() / rate * float64(time.Second))
			}
			next()
			for w := window; ; w += window {
				n := 0
				for ; at < w; next() {
					c.Add(at)
					n++
				}
				if w == window {
					whole += float64(n)
				}
				r, judged := c.Close(w, window.Seconds())
				if judged && n > 0 {
					sum += r
					break
				}
				require.Less(t, w, 4*window, "judged by the window after the first request's")
			}
		}
		require.InEpsilon(t, rate, sum/runs, 0.05, "at %g req/s", rate)
		require.Less(t, whole/runs/window.Seconds(), 0.6*rate, "the whole window's count at %g req/s", rate)
	}
}

// Until a model's first period ends, its estimate is what that period has
// measured so far, once the period's count can be judged; then its EWMA.
func TestEstimateNow(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	var period Count
	var e Estimate
	require.Zero(t, e.Now(&period, ms(3000), 3), "no request yet")
	for at := ms(2800); at < ms(3000); at += ms(25) {
		period.Add(at)
	}
	require.Zero(t, e.Now(&period, ms(3000), 3), "a load 0.2 s old is not judged yet")
	for at := ms(3000); at < ms(5000); at += ms(25) {
		period.Add(at)
	}
	require.InDelta(t, 87/2.2, e.Now(&period, ms(5000), 5), 1e-9, "the 87 requests after the first, over the 2.2 s since it")
	require.Zero(t, e.Now(&period, ms(5000), 0), "a window not open yet")
	r, _ := period.Close(ms(20000), 20)
	e.Fold(r, 0.5)
	period.Add(ms(20100))
	require.InDelta(t, 87/17.2, e.Now(&period, ms(20200), 0.2), 1e-9, "the first period's rate, folded")
}
