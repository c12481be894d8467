package store

import (
	"context"
	"database/sql"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// pointsOf are n latency points of one model, written in one transaction.
func pointsOf(model string, n int) []LatencyPoint {
	pts := make([]LatencyPoint, n)
	for i := range pts {
		pts[i] = LatencyPoint{ModelSHA: shaOf(model), DeviceType: "cpu", Size: 100, Batch: i + 1,
			P50MS: 1, P99MS: 2, MeanMS: 1, Samples: 20, Complete: true}
	}
	return pts
}

// writeSnapshot writes the bytes of a snapshot into a file of its own and
// returns its path.
func writeSnapshot(t *testing.T, b []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "backup.db")
	require.NoError(t, os.WriteFile(path, b, 0o600))
	return path
}

func TestSnapshotHoldsWhatTheLogHolds(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	for i := range 3 {
		_, err := s.AppendEvent(ctx, Event{Kind: EventConfigReload, Message: "reload " + strconv.Itoa(i)})
		require.NoError(t, err)
	}
	require.NoError(t, s.PutLatency(ctx, pointsOf("m", 6)))
	wal, err := os.Stat(s.Path() + "-wal")
	require.NoError(t, err)
	require.NotZero(t, wal.Size(), "the writes are in the log, not yet in the main file")

	b, err := s.Snapshot(ctx)
	require.NoError(t, err)
	path := writeSnapshot(t, b)
	sum, err := Inspect(ctx, path)
	require.NoError(t, err)
	require.Equal(t, SchemaVersion(), sum.SchemaVersion)
	require.EqualValues(t, 3, sum.Events)
	require.EqualValues(t, 6, sum.LatencyPoints)
	require.EqualValues(t, len(b), sum.Bytes)
	require.False(t, sum.LastEvent.IsZero())

	// The copy is a database the daemon opens as it would its own.
	c, err := Open(ctx, path)
	require.NoError(t, err)
	defer func() { require.NoError(t, c.Close()) }()
	events, err := c.Events(ctx, 0, 0)
	require.NoError(t, err)
	require.Len(t, events, 3)
	require.Equal(t, "reload 2", events[2].Message)
}

func TestSnapshotIsOneMoment(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	const perWrite = 10
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var werr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if err := s.PutLatency(ctx, pointsOf("m"+strconv.Itoa(i), perWrite)); err != nil {
				werr = err
				return
			}
		}
	}()
	var counts []int64
	for range 20 {
		b, err := s.Snapshot(ctx)
		require.NoError(t, err)
		path := writeSnapshot(t, b)
		sum, err := Inspect(ctx, path)
		require.NoError(t, err)
		counts = append(counts, sum.LatencyPoints)
	}
	close(stop)
	wg.Wait()
	require.NoError(t, werr)
	for _, n := range counts {
		require.Zero(t, n%perWrite, "every write of %d points is in a snapshot whole or not at all: %v", perWrite, counts)
	}
	require.NotEqual(t, counts[0], counts[len(counts)-1], "writes went on while the snapshots were taken: %v", counts)
}

func TestSnapshotFile(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "gpuletd.db")
	writeFilled(t, path)
	before, err := os.ReadFile(path)
	require.NoError(t, err)
	b, err := SnapshotFile(ctx, path, true)
	require.NoError(t, err)
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, before, after, "reading it changes nothing")
	for _, p := range Files(path)[1:] {
		require.NoFileExists(t, p, "alone, the log and index SQLite made to read it are removed")
	}
	sum, err := Inspect(ctx, writeSnapshot(t, b))
	require.NoError(t, err)
	require.EqualValues(t, 2000, sum.LatencyPoints)

	// Not alone (a daemon may have them open): they stay.
	_, err = SnapshotFile(ctx, path, false)
	require.NoError(t, err)
	for _, p := range Files(path)[1:] {
		require.FileExists(t, p)
	}

	_, err = SnapshotFile(ctx, filepath.Join(t.TempDir(), "none.db"), true)
	require.ErrorIs(t, err, fs.ErrNotExist)
}

func TestInspectRefuses(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		make func(t *testing.T, path string)
		want error
	}{
		{"missing", func(*testing.T, string) {}, fs.ErrNotExist},
		{"a directory", func(t *testing.T, path string) { require.NoError(t, os.Mkdir(path, 0o750)) }, ErrCorrupt},
		{"not a database", func(t *testing.T, path string) {
			require.NoError(t, os.WriteFile(path, []byte("SQLite format 2\x00 and then some words that are no page at all"), 0o600))
		}, ErrCorrupt},
		{"malformed pages", func(t *testing.T, path string) {
			pageSize := writeFilled(t, path)
			f, err := os.OpenFile(path, os.O_RDWR, 0)
			require.NoError(t, err)
			defer f.Close()
			junk := make([]byte, pageSize)
			for i := range junk {
				junk[i] = 0x5A
			}
			_, err = f.WriteAt(junk, int64(3*pageSize))
			require.NoError(t, err)
		}, ErrCorrupt},
		{"an empty file", func(t *testing.T, path string) { require.NoError(t, os.WriteFile(path, nil, 0o600)) }, ErrNotGpuletd},
		{"another program's database", func(t *testing.T, path string) {
			db, err := sql.Open("sqlite3", path)
			require.NoError(t, err)
			defer db.Close()
			_, err = db.Exec("CREATE TABLE notes (text TEXT)")
			require.NoError(t, err)
		}, ErrNotGpuletd},
		{"a newer gpuletd's", func(t *testing.T, path string) {
			s, err := Open(ctx, path)
			require.NoError(t, err)
			_, err = s.w.ExecContext(ctx, `INSERT INTO schema_version VALUES (?, 1, 'from the future')`, SchemaVersion()+1)
			require.NoError(t, err)
			require.NoError(t, s.Close())
		}, ErrSchemaTooNew},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "backup.db")
			tt.make(t, path)
			_, err := Inspect(ctx, path)
			require.ErrorIs(t, err, tt.want)
			require.ErrorContains(t, err, path)
		})
	}
}

// backupOf writes a snapshot of a fresh store with events (their messages)
// into a file and returns its path.
func backupOf(t *testing.T, messages ...string) string {
	t.Helper()
	ctx := context.Background()
	s := openTest(t)
	for _, m := range messages {
		_, err := s.AppendEvent(ctx, Event{Kind: EventConfigReload, Message: m})
		require.NoError(t, err)
	}
	b, err := s.Snapshot(ctx)
	require.NoError(t, err)
	path := writeSnapshot(t, b)
	return path
}

// eventMessages opens the database at path and lists its events' messages.
func eventMessages(t *testing.T, path string) []string {
	t.Helper()
	ctx := context.Background()
	s, err := Open(ctx, path)
	require.NoError(t, err)
	defer func() { require.NoError(t, s.Close()) }()
	events, err := s.Events(ctx, 0, 0)
	require.NoError(t, err)
	var out []string
	for _, e := range events {
		out = append(out, e.Message)
	}
	return out
}

func TestRestore(t *testing.T) {
	ctx := context.Background()
	backup := backupOf(t, "from the backup")
	dir := t.TempDir()
	dst := filepath.Join(dir, FileName)
	s, err := Open(ctx, dst)
	require.NoError(t, err)
	_, err = s.AppendEvent(ctx, Event{Kind: EventConfigReload, Message: "the database replaced"})
	require.NoError(t, err)
	require.NoError(t, s.Close())
	require.NoError(t, os.Chmod(dst, 0o600))
	// What a daemon that was killed leaves beside its database.
	require.NoError(t, os.WriteFile(dst+"-wal", []byte("log"), 0o600))

	r, err := Restore(ctx, dst, backup, ".before-restore", RestoreOptions{})
	require.NoError(t, err)
	require.Equal(t, dst+".before-restore", r.Aside)
	require.EqualValues(t, 1, r.Summary.Events)
	require.Equal(t, []string{"from the backup"}, eventMessages(t, dst))
	fi, err := os.Stat(dst)
	require.NoError(t, err)
	require.Equal(t, fs.FileMode(0o600), fi.Mode().Perm(), "the mode of the database it replaced")
	wal, err := os.ReadFile(r.Aside + "-wal")
	require.NoError(t, err)
	require.Equal(t, "log", string(wal), "the log moves aside with its database")
	require.NoError(t, os.Remove(r.Aside+"-wal"))
	require.Equal(t, []string{"the database replaced"}, eventMessages(t, r.Aside), "nothing of it is lost")

	// Restored again within the same second: the aside name takes a number.
	r, err = Restore(ctx, dst, backup, ".before-restore", RestoreOptions{})
	require.NoError(t, err)
	require.Equal(t, dst+".before-restore-2", r.Aside)
	require.Equal(t, []string{"from the backup"}, eventMessages(t, r.Aside))

	// A damaged backup: refused before anything moves.
	junk := filepath.Join(t.TempDir(), "junk.db")
	require.NoError(t, os.WriteFile(junk, []byte("not a database at all, not even close to one"), 0o600))
	_, err = Restore(ctx, dst, junk, ".other", RestoreOptions{})
	require.ErrorIs(t, err, ErrCorrupt)
	require.NoFileExists(t, dst+".other")
	require.FileExists(t, dst)

	// Into a state directory without a database.
	fresh := filepath.Join(t.TempDir(), FileName)
	r, err = Restore(ctx, fresh, backup, ".x", RestoreOptions{})
	require.NoError(t, err)
	require.Empty(t, r.Aside)
	require.Equal(t, []string{"from the backup"}, eventMessages(t, fresh))
}

func TestMoveAsideAndBack(t *testing.T) {
	dir := t.TempDir()
	dst, aside := filepath.Join(dir, FileName), filepath.Join(dir, "aside")
	for _, p := range Files(dst)[:2] { // no index: a file missing is passed over
		require.NoError(t, os.WriteFile(p, []byte(filepath.Base(p)), 0o600))
	}
	moved, err := moveAside(dst, aside)
	require.NoError(t, err)
	require.Equal(t, [][2]string{{dst, aside}, {dst + "-wal", aside + "-wal"}}, moved)
	require.NoFileExists(t, dst)
	require.NoError(t, moveBack(moved))
	for _, p := range Files(dst)[:2] {
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		require.Equal(t, filepath.Base(p), string(b))
	}

	// A name it would move to is taken: nothing moves.
	require.NoError(t, os.MkdirAll(aside+"-shm", 0o750))
	moved, err = moveAside(dst, aside)
	require.ErrorContains(t, err, aside+"-shm exists")
	require.Empty(t, moved)
	require.FileExists(t, dst)
}

// Run as root (sudo gpuletd restore), the restored file goes to the owner
// of the state directory, the service's user, which could not write a
// root-owned database.
// A restore refuses to take the database from under a `gpuletd profile`
// measuring into it, whose points would go to the one moved aside.
func TestRestoreWaitsForAProfileMeasuringIntoIt(t *testing.T) {
	ctx := context.Background()
	backup := backupOf(t, "from the backup")
	dst := filepath.Join(t.TempDir(), FileName)
	s, err := Open(ctx, dst, WithOwner("gpuletd profile (pid 7)"))
	require.NoError(t, err)
	defer s.Close()
	run, err := s.StartRun(ctx, shaOf("a"), "cpu", "")
	require.NoError(t, err)
	require.Equal(t, []string{"gpuletd profile (pid 7)"}, MeasuringInto(dst))

	_, err = Restore(ctx, dst, backup, ".before-restore", RestoreOptions{})
	require.ErrorIs(t, err, ErrBusy)
	require.ErrorContains(t, err, "gpuletd profile (pid 7) measures a profile into it now; let it finish, or stop it, then restore")
	require.NoFileExists(t, dst+".before-restore", "nothing moved")

	require.NoError(t, s.FinishRun(ctx, run.ID, RunComplete, ""))
	require.Empty(t, MeasuringInto(dst))
	require.NoError(t, s.Close())
	_, err = Restore(ctx, dst, backup, ".before-restore", RestoreOptions{})
	require.NoError(t, err)
}

func TestRestoreGivesTheFileToTheDirectorysOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("only root gives files away")
	}
	ctx := context.Background()
	backup := backupOf(t, "owned")
	dir := filepath.Join(t.TempDir(), "state")
	require.NoError(t, os.Mkdir(dir, 0o750))
	const nobody = 65534
	require.NoError(t, os.Chown(dir, nobody, nobody))
	dst := filepath.Join(dir, FileName)
	_, err := Restore(ctx, dst, backup, ".x", RestoreOptions{})
	require.NoError(t, err)
	fi, err := os.Stat(dst)
	require.NoError(t, err)
	st := fi.Sys().(*syscall.Stat_t)
	require.EqualValues(t, nobody, st.Uid)
	require.EqualValues(t, nobody, st.Gid)
}

// A backup with events rows that break the table's constraints is one the
// daemon opens (it quarantines them), so Inspect and Restore take it too.
func TestInspectAcceptsBadEventsRows(t *testing.T) {
	ctx := context.Background()
	path := backupOf(t, "good")
	badEventsRow(t, path)
	sum, err := Inspect(ctx, path)
	require.NoError(t, err)
	require.EqualValues(t, 2, sum.Events)

	dst := filepath.Join(t.TempDir(), FileName)
	_, err = Restore(ctx, dst, path, ".x", RestoreOptions{})
	require.NoError(t, err)
	require.Equal(t, []string{"good"}, eventMessages(t, dst), "opened, the bad row is quarantined")
}

// Restored without its history, a backup of another node keeps its
// measurements and drops its events and plans, leaving no log behind.
func TestRestoreWithoutHistory(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	require.NoError(t, s.PutLatency(ctx, pointsOf("m", 4)))
	_, err := s.AppendEvent(ctx, Event{Kind: EventConfigReload, Message: "the other node's"})
	require.NoError(t, err)
	_, err = s.SavePlan(ctx, PlanRecord{Algorithm: "gpulet-int", Reason: "start", Plan: []byte(`{}`), Schedulable: true})
	require.NoError(t, err)
	b, err := s.Snapshot(ctx)
	require.NoError(t, err)
	backup := writeSnapshot(t, b)

	dst := filepath.Join(t.TempDir(), FileName)
	r, err := Restore(ctx, dst, backup, ".x", RestoreOptions{WithoutHistory: true})
	require.NoError(t, err)
	require.EqualValues(t, 4, r.Summary.LatencyPoints)
	require.Zero(t, r.Summary.Events)
	require.Zero(t, r.Summary.Plans)
	for _, p := range Files(dst)[1:] {
		require.NoFileExists(t, p)
	}
	require.Empty(t, eventMessages(t, dst))
	c, err := Open(ctx, dst)
	require.NoError(t, err)
	defer func() { require.NoError(t, c.Close()) }()
	pts, err := c.Latency(ctx, shaOf("m"), "cpu")
	require.NoError(t, err)
	require.Len(t, pts, 4)
}

// A backup of an older release is restored as it is, unmigrated: an older
// binary can be given it back; the next Open migrates it.
func TestRestoreLeavesAnOlderSchemaAsItIs(t *testing.T) {
	ctx := context.Background()
	ms, err := Migrations()
	require.NoError(t, err)
	backup := filepath.Join(t.TempDir(), "old.db")
	db, err := sql.Open("sqlite3", backup)
	require.NoError(t, err)
	for _, stmt := range []string{schemaVersionDDL, ms[0].SQL} {
		_, err = db.Exec(stmt)
		require.NoError(t, err)
	}
	_, err = db.Exec(`INSERT INTO schema_version VALUES (1, 0, ?)`, ms[0].Description)
	require.NoError(t, err)
	require.NoError(t, db.Close())

	dst := filepath.Join(t.TempDir(), FileName)
	r, err := Restore(ctx, dst, backup, ".x", RestoreOptions{WithoutHistory: true})
	require.NoError(t, err)
	require.Equal(t, 1, r.Summary.SchemaVersion)
	sum, err := Inspect(ctx, dst)
	require.NoError(t, err)
	require.Equal(t, 1, sum.SchemaVersion, "restored unmigrated")
	s, err := Open(ctx, dst)
	require.NoError(t, err)
	v, err := s.Version(ctx)
	require.NoError(t, err)
	require.Equal(t, SchemaVersion(), v, "the next Open migrates it")
	require.NoError(t, s.Close())
}

// ReadFile reads a database another process left, through the Store's own
// queries, and refuses writes.
func TestReadFile(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), FileName)
	s, err := Open(ctx, path)
	require.NoError(t, err)
	for _, kind := range []string{"plan", "store", "plan"} {
		_, err := s.AppendEvent(ctx, Event{Kind: kind, Message: kind})
		require.NoError(t, err)
	}
	require.NoError(t, s.Close())

	err = ReadFile(ctx, path, true, func(r *Store) error {
		evs, err := r.LatestEventsMatching(ctx, 5, EventFilter{Kinds: []string{"plan"}})
		require.NoError(t, err)
		require.Len(t, evs, 2)
		_, err = r.AppendEvent(ctx, Event{Kind: "plan"})
		require.ErrorIs(t, err, ErrReadOnly)
		require.ErrorContains(t, err, "opened only to be read")
		return nil
	})
	require.NoError(t, err)
	for _, p := range Files(path)[1:] {
		require.NoFileExists(t, p, "alone, what SQLite made to read is gone")
	}
	err = ReadFile(ctx, filepath.Join(t.TempDir(), "none.db"), true, func(*Store) error { return nil })
	require.ErrorIs(t, err, os.ErrNotExist)
}
