package main

import (
	"encoding/json"
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// historyEvent is an event of a daemon's history as /api/v1/events gives
// it.
type historyEvent struct {
	Kind    string            `json:"kind"`
	Message string            `json:"message"`
	Attrs   map[string]string `json:"attrs"`
}

// waitEvent waits up to d for an event of kind in the history of the
// daemon at base that match accepts, and returns it; logs (the daemon's)
// are shown when none comes.
func waitEvent(t *testing.T, base, kind string, d time.Duration, match func(historyEvent) bool, logs fmt.Stringer) historyEvent {
	t.Helper()
	var found historyEvent
	require.Eventually(t, func() bool {
		var evs []historyEvent
		if json.Unmarshal(do(t, "GET", base+"/api/v1/events?limit=1000&kind="+url.QueryEscape(kind), nil, nil).body, &evs) != nil {
			return false
		}
		for _, e := range evs {
			if match(e) {
				found = e
				return true
			}
		}
		return false
	}, d, 50*time.Millisecond, "no %s event that fits; logs:\n%s", kind, logs)
	return found
}
