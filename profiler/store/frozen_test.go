package store

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
)

var update = flag.Bool("update", false, "rewrite the frozen schema files in testdata/")

// frozenAppliedAt stamps migrations in frozen databases, so dumps are stable.
var frozenAppliedAt = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

func frozenPath(v int) string { return filepath.Join("testdata", fmt.Sprintf("schema_v%d.sql", v)) }

// buildFrozen makes a database at version v from migrations 1..v and
// testdata/seed_v<v>.sql, and returns it dumped as SQL.
func buildFrozen(t *testing.T, ms []Migration, v int) string {
	t.Helper()
	ctx := context.Background()
	seed, err := os.ReadFile(filepath.Join("testdata", fmt.Sprintf("seed_v%d.sql", v)))
	require.NoError(t, err, "every released schema version needs rows to freeze with it")
	db := sql.OpenDB(newConnector(filepath.Join(t.TempDir(), "frozen.db"), connWriter, time.Second, 0))
	defer db.Close()
	db.SetMaxOpenConns(1)
	require.NoError(t, migrate(ctx, db, ms[:v], func() time.Time { return frozenAppliedAt }, zap.NewNop()))
	_, err = db.ExecContext(ctx, string(seed))
	require.NoError(t, err)
	header := fmt.Sprintf("-- Frozen gpuletd store database at schema version %d: migrations 0001..%04d plus testdata/seed_v%d.sql.\n"+
		"-- Rewritten only by `go test ./profiler/store -run TestFrozenSchemas -update`; never edit by hand.\n", v, v, v)
	return dumpDatabase(t, db, header)
}

// TestFrozenSchemas checks that each testdata/schema_vN.sql, for every
// version before the current one, is still what migrations 1..N produce, so
// that nobody edits a released migration. -update rewrites the files.
func TestFrozenSchemas(t *testing.T) {
	ms, err := loadMigrations()
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(ms), 2, "the upgrade path needs at least two migrations")
	for v := 1; v < len(ms); v++ {
		t.Run(fmt.Sprintf("v%d", v), func(t *testing.T) {
			got := buildFrozen(t, ms, v)
			if *update {
				require.NoError(t, os.WriteFile(frozenPath(v), []byte(got), 0o644))
			}
			want, err := os.ReadFile(frozenPath(v))
			require.NoError(t, err)
			require.Equal(t, string(want), got, "migrations 1..%d no longer produce %s: a released migration changed", v, frozenPath(v))
		})
	}
}

// loadFrozen writes the frozen database of version v into a new file and
// returns its path.
func loadFrozen(t *testing.T, v int) string {
	t.Helper()
	script, err := os.ReadFile(frozenPath(v))
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), fmt.Sprintf("v%d.db", v))
	db, err := sql.Open("sqlite3", path)
	require.NoError(t, err)
	defer db.Close()
	_, err = db.ExecContext(context.Background(), string(script))
	require.NoError(t, err)
	return path
}

// upgradeChecks assert, per frozen version, that its rows survived the
// upgrade to the current schema.
var upgradeChecks = map[int]func(t *testing.T, s *Store){
	1: checkUpgradedV1,
	2: checkUpgradedV2,
	3: checkUpgradedV3,
	4: checkUpgradedV4,
}

func checkUpgradedV1(t *testing.T, s *Store) {
	ctx := context.Background()
	alex := shaOf("alexnet")

	m, err := s.Model(ctx, "resnet50", 2)
	require.NoError(t, err)
	require.Equal(t, ModelRecord{Name: "resnet50", Version: 2, SHA256: shaOf("resnet50"),
		Path: "/var/lib/gpuletd/models/resnet50/2/model.onnx", SLOMS: 95, MaxBatchSize: 16, Platform: "onnxruntime_onnx",
		CreatedAt: time.Unix(0, 1735732800000000000).UTC(), UpdatedAt: time.Unix(0, 1735819200000000000).UTC()}, m)
	models, err := s.Models(ctx)
	require.NoError(t, err)
	require.Len(t, models, 2)

	pts, err := s.Latency(ctx, alex, "igniter-v100")
	require.NoError(t, err)
	require.Len(t, pts, 3)
	require.Equal(t, 2.0732911841155173, pts[0].P50MS)
	require.True(t, math.IsNaN(pts[0].P99MS))
	require.Zero(t, pts[0].RunID, "rows from before profile runs existed have no run")
	require.Equal(t, LatencyPoint{ModelSHA: alex, DeviceType: "igniter-v100", Size: 20, Batch: 2, P50MS: 2.532432363344048,
		P99MS: 2.9, MeanMS: 2.6, Samples: 37, Complete: false, MeasuredAt: time.Unix(0, 1735732800000000000).UTC()}, pts[1])
	ok, err := s.HasCompleteProfile(ctx, alex, "igniter-v100", []int{20, 40}, []int{1})
	require.NoError(t, err)
	require.True(t, ok)

	util, err := s.Util(ctx, alex, "igniter-v100")
	require.NoError(t, err)
	require.Len(t, util, 2)
	require.Equal(t, MetricDRAM, util[0].Metric)
	require.Equal(t, 10.075180111842773, util[0].Value)
	require.True(t, math.IsNaN(util[1].Value))

	xs, err := s.InterferenceSamples(ctx, "igniter-v100")
	require.NoError(t, err)
	require.Len(t, xs, 1)
	require.Equal(t, 3.5690385860655733, xs[0].ColocBMS)

	c, err := s.LatestCoefficients(ctx, "igniter-v100", "paper-linear")
	require.NoError(t, err)
	require.Equal(t, []string{"l2_a", "dram_a", "l2_b", "dram_b", "const"}, c.Features)
	require.Equal(t, 600, c.Samples)

	p, err := s.LatestPlan(ctx)
	require.NoError(t, err)
	require.Equal(t, "gpulet-int", p.Algorithm)
	require.True(t, p.Schedulable)

	evs, err := s.Events(ctx, 0, 0)
	require.NoError(t, err)
	require.Len(t, evs, 2)
	require.Equal(t, map[string]string{"plan": "1"}, evs[0].Attrs)

	d, err := s.DeviceType(ctx, "igniter-v100")
	require.NoError(t, err)
	require.Equal(t, []int{10, 20, 40, 50, 60, 80, 100}, d.Sizes)

	// What version 2 added works on the upgraded file, and new ids follow the
	// old ones.
	run, err := s.StartRun(ctx, alex, "igniter-v100", "re-profile")
	require.NoError(t, err)
	require.NoError(t, s.PutLatency(ctx, []LatencyPoint{{ModelSHA: alex, DeviceType: "igniter-v100", Size: 20, Batch: 2,
		P50MS: 2.5, P99MS: 2.8, MeanMS: 2.55, Samples: 200, Complete: true, RunID: run.ID}}))
	pts, err = s.Latency(ctx, alex, "igniter-v100")
	require.NoError(t, err)
	require.Equal(t, run.ID, pts[1].RunID)
	e, err := s.AppendEvent(ctx, Event{Kind: EventProfileJob, Message: "started"})
	require.NoError(t, err)
	require.Equal(t, int64(3), e.ID)
}

func checkUpgradedV2(t *testing.T, s *Store) {
	ctx := context.Background()
	vgg := "5f1a9c3d0b7e2a4c6d8e0f1a3b5c7d9e1f2a4b6c8d0e2f4a6b8c0d2e4f6a8b0c"

	runs, err := s.Runs(ctx, vgg, "cpu", 0)
	require.NoError(t, err)
	require.Len(t, runs, 2)
	pts, err := s.Latency(ctx, vgg, "cpu")
	require.NoError(t, err)
	require.Len(t, pts, 2)
	require.Equal(t, int64(1), pts[0].RunID)

	// Version 3's memory: none for a model profiled before it existed (the
	// daemon then estimates), and one stored by a later run.
	_, err = s.ModelMemory(ctx, vgg, "cpu")
	require.ErrorIs(t, err, ErrNotFound)
	run, err := s.StartRun(ctx, vgg, "cpu", "re-profile")
	require.NoError(t, err)
	require.Equal(t, int64(3), run.ID, "new runs follow the old ones")
	require.NoError(t, s.PutModelMemory(ctx, ModelMemory{ModelSHA: vgg, DeviceType: "cpu", ResidentMB: 1438, RunID: run.ID}))
	m, err := s.ModelMemory(ctx, vgg, "cpu")
	require.NoError(t, err)
	require.Equal(t, 1438.0, m.ResidentMB)
}

func checkUpgradedV3(t *testing.T, s *Store) {
	ctx := context.Background()
	sha := "7a2c4e6f8a0b2c4d6e8f0a1b3c5d7e9f1a3b5c7d9e1f3a5b7c9d1e3f5a7b9c1d"

	m, err := s.ModelMemory(ctx, sha, "cpu")
	require.NoError(t, err)
	require.Equal(t, 212.5, m.ResidentMB)
	require.Equal(t, int64(1), m.RunID)

	// Version 4's file digests: none kept before it existed (the daemon
	// then reads the files once), and kept from then on.
	ds, err := s.FileDigests(ctx)
	require.NoError(t, err)
	require.Empty(t, ds)
	d := FileDigest{Path: "/var/lib/gpuletd/models/resnet18/1/model.onnx", Platform: "onnxruntime", Entry: []byte(`{"sha256":"7a2c"}`)}
	require.NoError(t, s.PutFileDigest(ctx, d))
	ds, err = s.FileDigests(ctx)
	require.NoError(t, err)
	require.Equal(t, []FileDigest{d}, ds)
}

// TestUpgradeFromFrozen opens each frozen database with the current code and
// checks that it was migrated to the current version, that its old rows
// survived, and that its schema is the same as a fresh database's.
func TestUpgradeFromFrozen(t *testing.T) {
	ctx := context.Background()
	ms, err := loadMigrations()
	require.NoError(t, err)
	fresh := openTest(t)
	for v := 1; v < len(ms); v++ {
		t.Run(fmt.Sprintf("v%d", v), func(t *testing.T) {
			check, ok := upgradeChecks[v]
			require.True(t, ok, "add an upgrade check for frozen version %d", v)
			path := loadFrozen(t, v)

			s, err := Open(ctx, path)
			require.NoError(t, err)
			defer func() { require.NoError(t, s.Close()) }()

			got, err := s.Version(ctx)
			require.NoError(t, err)
			require.Equal(t, len(ms), got)
			var applied int64
			require.NoError(t, s.reader().QueryRowContext(ctx, `SELECT applied_at FROM schema_version WHERE version = 1`).Scan(&applied))
			require.Equal(t, frozenAppliedAt.UnixNano(), applied, "the record of earlier migrations is kept")

			require.Equal(t, dumpSchema(t, fresh.reader()), dumpSchema(t, s.reader()), "an upgraded database must have the schema of a new one")
			check(t, s)
		})
	}
}

func checkUpgradedV4(t *testing.T, s *Store) {
	ctx := context.Background()
	sha := "3c5e7a9b1d3f5a7c9e1b3d5f7a9c1e3b5d7f9a1c3e5b7d9f1a3c5e7b9d1f3a5c"

	// Version 5's executor memory: none told apart in a row measured
	// before it (the whole of it counts per copy, as before), and told
	// apart by a later run, which replaces it.
	m, err := s.ModelMemory(ctx, sha, "cpu")
	require.NoError(t, err)
	require.Equal(t, 74.2, m.ResidentMB)
	require.Zero(t, m.ExecutorMB)
	require.Equal(t, 74.2, m.OwnMB())
	mb, err := s.ExecutorMemory(ctx, "cpu")
	require.NoError(t, err)
	require.Zero(t, mb)
	require.NoError(t, s.PutModelMemory(ctx, ModelMemory{ModelSHA: sha, DeviceType: "cpu", ResidentMB: 74, ExecutorMB: 52.5, RunID: 1}))
	m, err = s.ModelMemory(ctx, sha, "cpu")
	require.NoError(t, err)
	require.Equal(t, 21.5, m.OwnMB())
	mb, err = s.ExecutorMemory(ctx, "cpu")
	require.NoError(t, err)
	require.Equal(t, 52.5, mb)

	ds, err := s.FileDigests(ctx)
	require.NoError(t, err)
	require.Len(t, ds, 1)
}
