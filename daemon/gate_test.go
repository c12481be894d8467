package daemon

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestGateLetsOneThrough(t *testing.T) {
	var g gate
	require.NoError(t, g.enter(context.Background()))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, g.enter(ctx), context.DeadlineExceeded, "held: a second caller waits until its context ends")
	g.leave()
	require.NoError(t, g.enter(context.Background()), "left: the next one passes")
	g.leave()
}
