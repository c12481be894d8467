package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpulet/gpuletd/daemon"
	"github.com/gpulet/gpuletd/internal/atomicfile"
	"github.com/gpulet/gpuletd/internal/bytefmt"
	"github.com/gpulet/gpuletd/profiler/store"
	"github.com/gpulet/gpuletd/sim/loadgen"
)

// backupTimeout bounds fetching a backup from a daemon.
const backupTimeout = 5 * time.Minute

func newBackupCmd(g *globalFlags) *cobra.Command {
	var (
		url, token string
		force      bool
		keep       int
	)
	cmd := &cobra.Command{
		Use:   "backup FILE|FOLDER",
		Short: "Save a copy of a running daemon's database: its profiles, device types, plans and events",
		Long: `Save the database of a running gpuletd (GET /api/v1/backup) into FILE: the
latency profiles it measured (minutes of a GPU's time per model), the device
types, the plans and the events. The daemon goes on serving and writing
meanwhile; the copy is of one moment. FILE is then checked as the daemon
would check it and what it holds is printed. Given a folder, it writes
gpuletd-<host>-<time>.db there. "gpuletd restore FILE" puts it back, on this
node or on another of the same GPUs.

The daemon is found at --url, or where the daemon holding the configured
runtime_dir says it listens, or at the configured listen address. When
nothing answers at the configured address, or a gpuletd of a release without
the backup call does (a backup before an upgrade's restart), the database in
the configured state_dir is copied directly (this needs read access to it).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, cancel := context.WithTimeout(cmd.Context(), backupTimeout)
			defer cancel()
			path := args[0]
			folder := ""
			if fi, err := os.Stat(path); err == nil && fi.IsDir() {
				folder = path
				path = filepath.Join(path, daemon.BackupFileName(time.Now()))
			} else if strings.HasSuffix(path, "/") {
				return &exitError{code: 2, msg: fmt.Sprintf("gpuletd: folder %s does not exist: make it first (mkdir -p %s)", path, path)}
			}
			if keep > 0 && folder == "" {
				return &exitError{code: 2, msg: "gpuletd: --keep needs a folder to write into, not a file: " + args[0]}
			}
			if err := checkBackupTarget(g, path, force); err != nil {
				return err
			}
			d, err := g.daemonOf(cmd, url)
			if err != nil {
				return err
			}
			data, err := fetchBackup(ctx, d, adminToken(g, token))
			// Nothing at the configured address, or a gpuletd of a release
			// before the backup call (a backup before an upgrade's
			// restart): the database itself is there to copy.
			var he *loadgen.HTTPError
			older := errors.As(err, &he) && he.Code == http.StatusNotFound
			switch {
			case url == "" && (errors.Is(err, syscall.ECONNREFUSED) || older) && d.serviceHint() == "":
				said := "no gpuletd answers at " + d.base
				if older {
					said = "the gpuletd at " + d.base + " has no backup call (a release before it)"
				}
				var from string
				if data, from, err = backupFromStateDir(ctx, g, said); err != nil {
					return err
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "%s: copying %s directly\n", said, from)
			case err != nil:
				return d.fail(err)
			}
			if err := atomicfile.Write(path, data, 0o600); err != nil {
				return fmt.Errorf("write backup: %w", err)
			}
			sum, err := store.Inspect(ctx, path)
			if err != nil {
				_ = os.Remove(path)
				return fmt.Errorf("check the backup (removed): %w", err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: %s\n", path, describeDatabase(sum))
			if keep > 0 {
				removed, err := pruneBackups(folder, keep)
				for _, p := range removed {
					fmt.Fprintf(cmd.OutOrStdout(), "removed %s (keeping the newest %d)\n", p, keep)
				}
				if err != nil {
					return fmt.Errorf("remove older backups: %w", err)
				}
			}
			return nil
		},
	}
	addURLFlag(cmd.Flags(), &url)
	cmd.Flags().StringVar(&token, "token", "", tokenUsage)
	cmd.Flags().BoolVar(&force, "force", false, "replace FILE when it exists")
	cmd.Flags().IntVar(&keep, "keep", 0, "with a FOLDER: then remove this host's older backups there (gpuletd-<host>-<time>.db), keeping the newest N; 0 keeps all")
	return cmd
}

// checkBackupTarget refuses a FILE that exists (unless force) and, even
// with force, the database a daemon of this configuration serves from: a
// backup written there would replace it under the daemon's feet.
func checkBackupTarget(g *globalFlags, path string, force bool) error {
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("check %s: %w", path, err)
	}
	if l, err := g.loadConfig(); err == nil {
		live := filepath.Join(l.Config.StateDir, store.FileName)
		for _, p := range store.Files(live) {
			if other, err := os.Stat(p); err == nil && os.SameFile(fi, other) {
				return &exitError{code: 2, msg: fmt.Sprintf("gpuletd: %s is the daemon's own database: write the backup somewhere else", path)}
			}
		}
	}
	if !force {
		return &exitError{code: 2, msg: fmt.Sprintf("gpuletd: %s exists: give --force to replace it", path)}
	}
	return nil
}

// fetchBackup asks the daemon d for its database.
func fetchBackup(ctx context.Context, d *daemonAPI, token string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, d.base+"/api/v1/backup", nil)
	if err != nil {
		return nil, fmt.Errorf("build request: %w", err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	defer d.client.CloseIdleConnections()
	code, body, msg, err := loadgen.Call(ctx, d.client, req, math.MaxInt64)
	if err != nil {
		return nil, err
	}
	if code != http.StatusOK {
		return nil, &loadgen.HTTPError{URL: req.URL.String(), Code: code, Message: msg}
	}
	return body, nil
}

// backupFromStateDir copies the database of the configured state_dir,
// when the daemon the configuration names gave none (said says why); see
// withStateDir.
func backupFromStateDir(ctx context.Context, g *globalFlags, said string) ([]byte, string, error) {
	var data []byte
	path, err := withStateDir(g, func(path string, alone bool) error {
		var err error
		data, err = store.SnapshotFile(ctx, path, alone)
		return err
	})
	if err != nil {
		return nil, "", &exitError{code: 1, msg: fmt.Sprintf("gpuletd: %s, and its database cannot be copied directly: %v%s", said, err, ownerHint(err))}
	}
	return data, path, nil
}

// pruneBackups removes this host's backups in folder (the names
// daemon.BackupFileName gives, which sort by time) but the newest keep, and
// returns the paths removed. Other files, and other hosts' backups, stay.
func pruneBackups(folder string, keep int) ([]string, error) {
	prefix := daemon.BackupFilePrefix()
	entries, err := os.ReadDir(folder)
	if err != nil {
		return nil, err
	}
	var ours []string
	for _, e := range entries {
		if name := e.Name(); e.Type().IsRegular() && strings.HasPrefix(name, prefix) && backupStamp.MatchString(strings.TrimPrefix(name, prefix)) {
			ours = append(ours, name) // ReadDir sorts by name: by time
		}
	}
	var removed []string
	for _, name := range ours[:max(0, len(ours)-keep)] {
		p := filepath.Join(folder, name)
		if err := os.Remove(p); err != nil {
			return removed, err
		}
		removed = append(removed, p)
	}
	return removed, nil
}

// backupStamp is the time in a backup's name and what follows it.
var backupStamp = regexp.MustCompile(`^\d{8}T\d{6}Z\.db$`)

// describeDatabase says what a database holds, on one line.
func describeDatabase(s store.Summary) string {
	held := counted(s.Models, "model") + ", " + counted(s.DeviceTypes, "device type") + ", " +
		counted(s.LatencyPoints, "latency point") + ", " + counted(s.Plans, "plan") + ", " + counted(s.Events, "event")
	if !s.LastEvent.IsZero() {
		held += " (the newest at " + s.LastEvent.Format("2006-01-02 15:04:05 MST") + ")"
	}
	return strings.Join([]string{bytefmt.Size(s.Bytes), fmt.Sprintf("schema %d", s.SchemaVersion), held}, "; ")
}
