package daemon

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The book keeps the capacity of the latest plan, whichever search ends
// last, and none once a plan has no load.
func TestCapacityBookKeepsTheLatestPlans(t *testing.T) {
	var b capacityBook
	require.Nil(t, b.get())
	t0 := time.Now()
	b.set(t0.Add(time.Second), &capacityStatus{Ratio: 2})
	b.set(t0, &capacityStatus{Ratio: 5}) // an older plan's search ended later
	require.Equal(t, 2.0, b.get().Ratio)
	b.get().Ratio = 9 // a copy
	require.Equal(t, 2.0, b.get().Ratio)
	b.set(t0.Add(2*time.Second), nil)
	require.Nil(t, b.get(), "every model unloaded: no capacity to speak of")
}
