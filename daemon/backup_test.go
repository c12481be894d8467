package daemon

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/profiler/store"
)

func TestBackupIsTheWholeDatabase(t *testing.T) {
	ctx := context.Background()
	n, st := historyNode(t)
	n.metrics = newMetrics(n)
	for _, msg := range []string{"first", "second"} {
		_, err := st.AppendEvent(ctx, store.Event{Kind: store.EventConfigReload, Message: msg})
		require.NoError(t, err)
	}
	_, err := st.SavePlan(ctx, store.PlanRecord{Algorithm: "gpulet-int", Reason: "start", Plan: []byte(`{"gpus": []}`), Schedulable: true})
	require.NoError(t, err)

	w := httptest.NewRecorder()
	n.routes(nil).ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/api/v1/backup", nil))
	require.Equal(t, http.StatusOK, w.Code, w.Body.String())
	require.Equal(t, "application/vnd.sqlite3", w.Header().Get("Content-Type"))
	require.Regexp(t, regexp.MustCompile(`^attachment; filename="gpuletd-.+-\d{8}T\d{6}Z\.db"$`), w.Header().Get("Content-Disposition"))

	path := filepath.Join(t.TempDir(), "backup.db")
	require.NoError(t, os.WriteFile(path, w.Body.Bytes(), 0o600))
	sum, err := store.Inspect(ctx, path)
	require.NoError(t, err)
	require.EqualValues(t, 2, sum.Events)
	require.EqualValues(t, 1, sum.Plans)
	require.Equal(t, store.SchemaVersion(), sum.SchemaVersion)
}

func TestBackupOfAClosedStoreSaysWhy(t *testing.T) {
	n, st := historyNode(t)
	n.metrics = newMetrics(n)
	require.NoError(t, st.Close())
	w := httptest.NewRecorder()
	n.routes(nil).ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/api/v1/backup", nil))
	require.Equal(t, http.StatusInternalServerError, w.Code)
	require.Contains(t, w.Body.String(), "back up the database: snapshot ")
}
