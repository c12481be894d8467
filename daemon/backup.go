package daemon

import (
	"fmt"
	"net/http"
	"os"
	"strconv"
	"time"

	"go.uber.org/zap"
)

// backupContentType is the media type of a SQLite database file.
const backupContentType = "application/vnd.sqlite3"

// handleAdminBackup answers GET /api/v1/backup: the whole database as it
// stands (store.Snapshot: profiles, device types, plans, events), a SQLite
// file that `gpuletd restore` puts back in a state directory. Profiling a
// model on a GPU takes minutes; this is how an operator keeps what was
// measured, or carries it to a node of the same GPUs. Writes go on while
// it is taken.
func (n *node) handleAdminBackup(w http.ResponseWriter, r *http.Request) {
	b, err := n.st.Snapshot(r.Context())
	if err != nil {
		n.log.Error("back up the database", zap.Error(err))
		writeError(w, http.StatusInternalServerError, fmt.Sprintf("back up the database: %v", err))
		return
	}
	h := w.Header()
	h.Set("Content-Type", backupContentType)
	h.Set("Content-Disposition", `attachment; filename="`+BackupFileName(time.Now())+`"`)
	h.Set("Content-Length", strconv.Itoa(len(b)))
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	if _, err := w.Write(b); err != nil {
		n.log.Warn("send a backup of the database", zap.String("remote", r.RemoteAddr), zap.Error(err))
		return
	}
	n.log.Info("database backed up", zap.Int("bytes", len(b)), zap.String("remote", r.RemoteAddr))
}

// BackupFileName is the file name a backup taken at t is offered under
// (and `gpuletd backup` writes into a folder it is given): this host's name
// and the time, so that backups of several nodes kept in one folder neither
// collide nor need renaming, and one host's sort by time.
func BackupFileName(t time.Time) string {
	return BackupFilePrefix() + t.UTC().Format("20060102T150405Z") + ".db"
}

// BackupFilePrefix is what the names of this host's backups begin with.
func BackupFilePrefix() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "node"
	}
	return "gpuletd-" + host + "-"
}
