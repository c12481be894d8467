package daemon

import (
	"encoding/json"
	"sync"
	"sync/atomic"

	"github.com/gpulet/gpuletd/daemon/config"
	"github.com/gpulet/gpuletd/mps"
	"github.com/gpulet/gpuletd/profiler/store"
	"go.uber.org/zap"
)

// node is the daemon's live state: what it serves, on what, and how.
type node struct {
	cfg      config.Config
	log      *zap.Logger
	st       *store.Store
	devices  *mps.Manager
	catalog  *catalog
	book     *profileBook
	sup      *supervisor
	router   *router
	events   *events
	rates    *rateMeter
	metrics  *metrics
	counters counters
	windows  windows

	planMu          sync.Mutex // one plan computed and applied at a time
	current         atomic.Pointer[planned]
	reorganizations atomic.Int64
	replanNow       chan string // asks the planner loop for a plan now
	ready           atomic.Bool
	stopping        atomic.Bool
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage("{}")
	}
	return b
}
