package daemon

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"

	"github.com/gpulet/gpuletd/daemon/config"
	"github.com/gpulet/gpuletd/daemon/connlimit"
	"github.com/gpulet/gpuletd/daemon/repository"
	"github.com/gpulet/gpuletd/executor/tensor"
	pb "github.com/gpulet/gpuletd/kserve/inferencepb"
)

func TestReloadAppliesTheBodyLimitWhereItFits(t *testing.T) {
	const mib = config.ByteSize(1 << 20)
	tests := []struct {
		name      string
		grpc      bool // a gRPC server started with the old limit
		limit     config.ByteSize
		applied   bool
		restart   []string // what the reload says waits for a restart
		wantLimit config.ByteSize
	}{
		{name: "a lower limit applies everywhere at once", grpc: true, limit: 16 * mib, applied: true, wantLimit: 16 * mib},
		{name: "a higher limit that the budget holds applies at once", limit: 128 * mib, applied: true, wantLimit: 128 * mib},
		{name: "a higher limit applies at once to gRPC too (TestReloadRenewsTheGRPCMessageCap)", grpc: true, limit: 128 * mib, applied: true, wantLimit: 128 * mib},
		{name: "a limit one body of which would overfill the running budget waits", grpc: true, limit: 200 * mib,
			restart: []string{"limits.max_request_body (200MiB: one body of it would overfill limits.max_inflight_bytes, 256MiB, as it runs)"}, wantLimit: 64 * mib},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cur := config.Default()
			require.Equal(t, 64*mib, cur.Limits.MaxRequestBody)
			require.Equal(t, 256*mib, cur.Limits.MaxInflightBytes)
			if !tt.grpc {
				cur.GRPCListen = ""
			}
			n := &node{sup: &supervisor{}, reloaded: make(chan struct{}, 1), bodies: connlimit.NewBudget(int64(cur.Limits.MaxInflightBytes))}
			n.cfg.Store(&cur)

			next := cur
			next.Limits.MaxRequestBody = tt.limit
			next.Limits.MaxInflightBytes = 4 * tt.limit // valid on its own; not live
			applied, restart := n.reload(&next)

			require.Equal(t, tt.applied, len(applied) == 1 && applied[0] == "limits.max_request_body", "applied %v", applied)
			require.Equal(t, append(tt.restart, "limits.max_inflight_bytes"), restart)
			require.Equal(t, tt.wantLimit, n.conf().Limits.MaxRequestBody)
			require.Equal(t, 256*mib, n.conf().Limits.MaxInflightBytes)
		})
	}
}

func TestGRPCHoldsALimitLoweredByAReload(t *testing.T) {
	cur := config.Default()
	n := &node{sup: &supervisor{}, reloaded: make(chan struct{}, 1), bodies: connlimit.NewBudget(int64(cur.Limits.MaxInflightBytes)),
		router: newRouter(), rates: newRateMeter(0.5, time.Now()),
		catalog: &catalog{models: map[string]*repository.Model{"m": askModel()}, pipelines: map[string]*repository.Model{}}}
	n.metrics = newMetrics(n)
	n.cfg.Store(&cur)
	next := cur
	next.Limits.MaxRequestBody = 1 << 10
	applied, _ := n.reload(&next)
	require.Contains(t, applied, "limits.max_request_body")

	// 2 KiB of raw input: under the 64 MiB the gRPC server started with,
	// over the 1 KiB the node holds to now.
	r := &pb.ModelInferRequest{ModelName: "m",
		Inputs:           []*pb.ModelInferRequest_InferInputTensor{{Name: "x", Datatype: string(tensor.FP32), Shape: []int64{128, 4}}},
		RawInputContents: [][]byte{make([]byte, 2<<10)}}
	res, held, ierr := n.inferGRPC(context.Background(), r, time.Now())
	require.Nil(t, held)
	require.Nil(t, res)
	require.NotNil(t, ierr)
	require.Equal(t, http.StatusRequestEntityTooLarge, ierr.code)
	require.Equal(t, reasonTooLarge, ierr.reason)
	require.Contains(t, ierr.msg, "over the limit of 1024 bytes (limits.max_request_body)")
	require.Zero(t, n.bodies.InUse(), "nothing was held for it")
}

// Every field a reload says it applies is applied: the configuration in
// force takes the new value (a live field without its case in reload would
// be reported applied and silently kept), and a field that is not live is
// reported as waiting for a restart and kept.
func TestReloadAppliesEveryLiveField(t *testing.T) {
	tests := []struct {
		field  string
		change func(*config.Config)
		got    func(*config.Config) any
		want   any
	}{
		{"log.level", func(c *config.Config) { c.Log.Level = "debug" }, func(c *config.Config) any { return c.Log.Level }, "debug"},
		{"metrics.triton_names", func(c *config.Config) { c.Metrics.TritonNames = true }, func(c *config.Config) any { return c.Metrics.TritonNames }, true},
		{"metrics.triton_latency_counters", func(c *config.Config) { c.Metrics.TritonLatencyCounters = false },
			func(c *config.Config) any { return c.Metrics.TritonLatencyCounters }, false},
		{"metrics.triton_summaries", func(c *config.Config) { c.Metrics.TritonSummaries = true }, func(c *config.Config) any { return c.Metrics.TritonSummaries }, true},
		{"metrics.triton_summary_quantiles", func(c *config.Config) { c.Metrics.TritonSummaryQuantiles = []string{"0.9:0.01"} },
			func(c *config.Config) any { return c.Metrics.TritonSummaryQuantiles }, []string{"0.9:0.01"}},
		{"scheduler.policy", func(c *config.Config) { c.Scheduler.Policy = "eager" }, func(c *config.Config) any { return c.Scheduler.Policy }, "eager"},
		{"scheduler.algorithm", func(c *config.Config) { c.Scheduler.Algorithm = "sbp" }, func(c *config.Config) any { return c.Scheduler.Algorithm }, "sbp"},
		{"scheduler.idle_plan", func(c *config.Config) { c.Scheduler.IdlePlan = config.IdlePlanPack }, func(c *config.Config) any { return c.Scheduler.IdlePlan }, config.IdlePlanPack},
		{"scheduler.reorganize_period", func(c *config.Config) { c.Scheduler.ReorganizePeriod = config.Duration(time.Minute) },
			func(c *config.Config) any { return c.Scheduler.ReorganizePeriod.D() }, time.Minute},
		{"scheduler.ewma_weight", func(c *config.Config) { c.Scheduler.EWMAWeight = 0.25 }, func(c *config.Config) any { return c.Scheduler.EWMAWeight }, 0.25},
		{"scheduler.priority_reserve", func(c *config.Config) { c.Scheduler.PriorityReserve = 0.5 }, func(c *config.Config) any { return c.Scheduler.PriorityReserve }, 0.5},
		{"limits.max_request_body", func(c *config.Config) { c.Limits.MaxRequestBody = 1 << 20 },
			func(c *config.Config) any { return c.Limits.MaxRequestBody }, config.ByteSize(1 << 20)},
		{"limits.max_queued_per_model", func(c *config.Config) { c.Limits.MaxQueuedPerModel = 7 },
			func(c *config.Config) any { return c.Limits.MaxQueuedPerModel }, 7},
		{"auth.admin_token", func(c *config.Config) { c.Auth.AdminToken = "s3cret" }, func(c *config.Config) any { return c.Auth.AdminToken }, "s3cret"},
		{"auth.restricted_apis", func(c *config.Config) { c.Auth.RestrictedAPIs = []string{"inference:k=v"} },
			func(c *config.Config) any { return c.Auth.RestrictedAPIs }, []string{"inference:k=v"}},
		{"history_retention", func(c *config.Config) { c.HistoryRetention = 0 }, func(c *config.Config) any { return c.HistoryRetention.D() }, time.Duration(0)},
		{"strict_readiness", func(c *config.Config) { c.StrictReadiness = true }, func(c *config.Config) any { return c.StrictReadiness }, true},
		{"allow_client_shm", func(c *config.Config) { c.AllowClientSHM = true }, func(c *config.Config) any { return c.AllowClientSHM }, true},
		{"limits.shutdown_timeout", func(c *config.Config) { c.Limits.ShutdownTimeout = config.Duration(time.Minute) }, func(c *config.Config) any { return c.Limits.ShutdownTimeout.D() }, time.Minute},
		{"repository_poll", func(c *config.Config) { c.RepositoryPoll = config.Duration(30 * time.Second) },
			func(c *config.Config) any { return c.RepositoryPoll.D() }, 30 * time.Second},
		{"response_cache.size", func(c *config.Config) { c.ResponseCache.Size = 1 << 20 },
			func(c *config.Config) any { return c.ResponseCache.Size }, config.ByteSize(1 << 20)},
	}
	covered := map[string]bool{}
	for _, tt := range tests {
		covered[tt.field] = true
		t.Run(tt.field, func(t *testing.T) {
			cur := config.Default()
			cur.GRPCListen = ""
			n := &node{sup: &supervisor{}, reloaded: make(chan struct{}, 1), bodies: connlimit.NewBudget(int64(cur.Limits.MaxInflightBytes)),
				rates: newRateMeter(cur.Scheduler.EWMAWeight, time.Now()), stepRates: newRateMeter(cur.Scheduler.EWMAWeight, time.Now()),
				cache: newResponseCache(int64(cur.ResponseCache.Size))}
			n.cfg.Store(&cur)
			next := cur
			tt.change(&next)
			next.Listen = "127.0.0.1:18999" // not live
			applied, restart := n.reload(&next)
			require.Equal(t, []string{tt.field}, applied)
			require.Equal(t, []string{"listen"}, restart)
			require.Equal(t, tt.want, tt.got(n.conf()))
			require.Equal(t, cur.Listen, n.conf().Listen)
			require.Equal(t, int64(n.conf().ResponseCache.Size), n.cache.usage().Budget, "the cache follows its size")
		})
	}
	for f := range liveFields {
		require.True(t, covered[f], "live field %s has no case here", f)
	}
}

// A reload whose configuration is invalid keeps the old one, and still has
// the planner loop follow the model repository: an operator who edited
// both hears about the file, and the models are followed.
func TestAnInvalidReloadStillFollowsTheRepository(t *testing.T) {
	n, _ := historyNode(t)
	n.reloaded = make(chan struct{}, 1)
	n.handleReload(func() (*config.Loaded, error) { return nil, errors.New("line 3: bad") })
	require.Len(t, n.reloaded, 1)
	evs := askEventList(t, n, "")
	require.Len(t, evs, 1)
	require.Contains(t, evs[0].Message, "configuration not reloaded, the old one stays: line 3: bad")
}

// allow_client_shm is read at every registration, and a reload that turns
// it off drops the regions registered, so that no client keeps the daemon
// reading and writing memory the setting now refuses.
func TestReloadTurnsClientSharedMemoryOff(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "obj"), make([]byte, 64), 0o600))
	cur := config.Default()
	cur.GRPCListen = ""
	n := &node{sup: &supervisor{}, reloaded: make(chan struct{}, 1), log: zap.NewNop(), shm: newSharedMemory(dir)}
	n.shm.allowed = func() bool { return n.conf().AllowClientSHM }
	n.cfg.Store(&cur)
	defer n.shm.close()
	require.ErrorIs(t, n.shm.register("in", "/obj", 0, 8), errShmNotAllowed, "off by default, as in Triton")
	require.Equal(t, http.StatusNotImplemented, shmCode(errShmNotAllowed))
	require.Equal(t, codes.Unimplemented, grpcstatus.Code(shmGRPCError(fmt.Errorf("register %w", errShmNotAllowed))))

	on := cur
	on.AllowClientSHM = true
	applied, _ := n.reload(&on)
	require.Equal(t, []string{"allow_client_shm"}, applied)
	require.NoError(t, n.shm.register("in", "/obj", 0, 8))
	regions, err := n.shm.status(systemRegion, "")
	require.NoError(t, err)
	require.Len(t, regions, 1)

	off := on
	off.AllowClientSHM = false
	applied, _ = n.reload(&off)
	require.Equal(t, []string{"allow_client_shm"}, applied)
	regions, err = n.shm.status(systemRegion, "")
	require.NoError(t, err)
	require.Empty(t, regions, "the regions are dropped")
	_, err = n.shm.ReadRegion("in", 0, 4)
	require.ErrorIs(t, err, errShmUnknown)
	require.ErrorIs(t, n.shm.register("in", "/obj", 0, 8), errShmNotAllowed)
}
