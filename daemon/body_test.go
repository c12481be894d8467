package daemon

import (
	"bytes"
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/daemon/config"
	"github.com/gpulet/gpuletd/daemon/connlimit"
	"github.com/gpulet/gpuletd/daemon/repository"
)

// A model whose requests flood the budget of bytes in flight is refused for
// memory alone, saying what its own requests hold, while another model's
// request, over REST or gRPC, finds room at once.
func TestAFloodOfOneModelLeavesRoomInTheBudget(t *testing.T) {
	n := &node{bodies: connlimit.NewBudget(1 << 20)}
	c := config.Default()
	n.cfg.Store(&c)
	model := func(name string) *repository.Model {
		m := &repository.Model{Name: name}
		m.Config.SLO = config.Duration(5 * time.Millisecond)
		return m
	}
	vgg, lenet5 := model("vgg"), model("lenet5")
	const size = 40 << 10 // under a sixteenth of the budget: not large

	var releases []func()
	defer func() {
		for _, release := range releases {
			release()
		}
	}()
	var refusal *inferError
	for range 64 {
		req := httptest.NewRequest("POST", "/v2/models/vgg/infer", bytes.NewReader(make([]byte, size)))
		_, release, ierr := n.readBody(req, vgg, time.Now())
		releases = append(releases, release)
		if ierr != nil {
			refusal = ierr
			break
		}
	}
	require.NotNil(t, refusal, "the flood meets the budget")
	require.Equal(t, reasonMemoryBudget, refusal.reason)
	require.Contains(t, refusal.msg, "of them this model's requests")
	require.Less(t, n.bodies.InUse(), int64(1<<20-size), "the flood leaves room")

	req := httptest.NewRequest("POST", "/v2/models/lenet5/infer", bytes.NewReader(make([]byte, size)))
	_, release, ierr := n.readBody(req, lenet5, time.Now())
	require.Nil(t, ierr, "another model's REST body is read: %s", ierr.message())
	release()
	release, ierr = n.holdMessage(context.Background(), lenet5, size, time.Now())
	releases = append(releases, release)
	require.Nil(t, ierr, "and its gRPC message is held: %s", ierr.message())
}
