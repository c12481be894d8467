package loadgen

import "time"

// MaxExported bounds the requests a run keeps one by one (Config.Export):
// past it the report's Exported stops and ExportTruncated says so.
const MaxExported = 5_000_000

// ExportedRequest is one request of a run kept one by one (Config.Export),
// as perf_analyzer's profile export gives each: when it was sent and when
// its answer came.
type ExportedRequest struct {
	// Sent is when it left (for a request that failed, when it fell due).
	Sent time.Time
	// Answered is when its answer came; zero for a request not answered
	// 200, which Failed names (as Report.Failed counts it).
	Answered time.Time
	Failed   string
	// SequenceID is its sequence's, for a stateful model; 0 for another.
	SequenceID uint64
}

// export keeps r in window t's requests while MaxExported allows; t.mu is
// held.
func (g *generator) export(t *tally, r ExportedRequest) {
	if g.exportLeft.Add(-1) < 0 {
		t.exportCut = true
		return
	}
	t.exported = append(t.exported, r)
}
