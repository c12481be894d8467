package daemon

import (
	"slices"
	"sync"
	"time"
)

// windowSize is how many recent requests a model's latency window keeps.
const windowSize = 4096

// latencyWindow keeps a model's recent request outcomes for the admin
// status: percentiles, SLO attainment and mean batch over the last
// windowSize requests.
type latencyWindow struct {
	mu    sync.Mutex
	lat   [windowSize]time.Duration // -1: failed
	late  [windowSize]bool          // answered after its deadline
	batch [windowSize]int32
	next  int
	n     int
}

// add records a request's outcome: its latency (-1 when it failed), the
// batch it ran in, and whether it was answered after its deadline (the
// model's SLO at the door, a pipeline step's own deadline for a step).
func (w *latencyWindow) add(lat time.Duration, batch int32, late bool) {
	w.mu.Lock()
	w.lat[w.next], w.batch[w.next], w.late[w.next] = lat, batch, late
	w.next = (w.next + 1) % windowSize
	w.n = min(w.n+1, windowSize)
	w.mu.Unlock()
}

// windowStats summarises a window.
type windowStats struct {
	Requests int `json:"requests"`
	// Answered is how many of them were answered (late or not): the
	// latencies are theirs, 0 when none was.
	Answered   int     `json:"answered"`
	P50MS      float64 `json:"p50_ms"`
	P99MS      float64 `json:"p99_ms"`
	Attainment float64 `json:"slo_attainment"` // share answered successfully within the SLO
	MeanBatch  float64 `json:"mean_batch"`
	Violations int     `json:"violations"`
}

func (w *latencyWindow) stats() windowStats {
	w.mu.Lock()
	lats := slices.Clone(w.lat[:w.n])
	late := slices.Clone(w.late[:w.n])
	batches := slices.Clone(w.batch[:w.n])
	w.mu.Unlock()
	s := windowStats{Requests: len(lats)}
	if s.Requests == 0 {
		return s
	}
	var ok []time.Duration
	var bsum, bn int64
	for i, l := range lats {
		if l < 0 || late[i] {
			s.Violations++
		}
		if l >= 0 {
			ok = append(ok, l)
		}
		if l >= 0 && batches[i] > 0 { // 0: no batch ran it (a cached answer)
			bsum += int64(batches[i])
			bn++
		}
	}
	s.Attainment = float64(s.Requests-s.Violations) / float64(s.Requests)
	s.Answered = len(ok)
	if len(ok) > 0 {
		slices.Sort(ok)
		s.P50MS = ms(ok[(len(ok)-1)/2])
		s.P99MS = ms(ok[(len(ok)*99+99)/100-1])
		if bn > 0 {
			s.MeanBatch = float64(bsum) / float64(bn)
		}
	}
	return s
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// windows holds a latencyWindow per model.
type windows struct{ m sync.Map }

func (w *windows) of(model string) *latencyWindow {
	// Load first: LoadOrStore would allocate a new one per request.
	if v, ok := w.m.Load(model); ok {
		return v.(*latencyWindow)
	}
	v, _ := w.m.LoadOrStore(model, &latencyWindow{})
	return v.(*latencyWindow)
}
