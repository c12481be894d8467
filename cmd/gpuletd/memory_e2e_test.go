package main

import (
	"context"
	"database/sql"
	"errors"
	"net/http"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/modelzoo"
	"github.com/gpulet/gpuletd/profiler/store"
)

// A model profiled before gpuletd measured memory has its memory measured
// at the next start, once, before the first plan: the store of a daemon
// that profiled lenet5 loses its measurement (as a database from an older
// gpuletd has none), and the daemon started on it measures it again and
// says so.
func TestAStartMeasuresTheMemoryAProfileLacks(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds and runs the binary")
	}
	repo := filepath.Join(t.TempDir(), "models")
	require.NoError(t, modelzoo.WriteRepository(repo, []string{"lenet5"}, 1))
	env := daemonEnv(t, "GPULETD_MODEL_REPOSITORY="+repo)
	addr, logs, pid := startDaemonUnder(t, env)
	base := "http://" + addr
	require.Eventually(t, func() bool { return do(t, http.MethodGet, base+"/v2/health/ready", nil, nil).code == http.StatusOK },
		90*time.Second, 100*time.Millisecond, "ready; logs:\n%s", logs)
	require.NoError(t, syscall.Kill(pid, syscall.SIGINT))
	require.Eventually(t, func() bool { return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) }, 30*time.Second, 20*time.Millisecond)

	db, err := sql.Open("sqlite3", filepath.Join(envValue(env, "GPULETD_STATE_DIR"), store.FileName))
	require.NoError(t, err)
	res, err := db.ExecContext(context.Background(), `DELETE FROM model_memory`)
	require.NoError(t, err)
	n, err := res.RowsAffected()
	require.NoError(t, err)
	require.Equal(t, int64(1), n, "the first start measured lenet5's memory while it profiled it")
	require.NoError(t, db.Close())

	addr, logs = startDaemon(t, env)
	base = "http://" + addr
	require.Eventually(t, func() bool { return do(t, http.MethodGet, base+"/v2/health/ready", nil, nil).code == http.StatusOK },
		90*time.Second, 100*time.Millisecond, "ready; logs:\n%s", logs)
	code, stdout, stderr := runCLI(t, "events", "--kind", "profile_job", "--url", base)
	require.Equal(t, 0, code, stderr)
	require.Equal(t, 1, strings.Count(stdout, "profiling lenet5 on cpu (a quick profile"), "the first start's alone: the profile is reused; events:\n%s", stdout)
	require.Regexp(t, `measured the memory of lenet5 on cpu: \d+ MB at batches up to \d+ \(it was profiled before gpuletd measured memory; the estimate from its file's size was \d+ MB\)`, stdout)
	code, stdout, stderr = runCLI(t, "models", "show", "lenet5", "--url", base)
	require.Equal(t, 0, code, stderr)
	require.Regexp(t, `(?m)^cpu +\d+ +\S+ +\d+ MB \(measured\)$`, stdout)
	require.Equal(t, 1, strings.Count(stdout, "(measured)"))
}
