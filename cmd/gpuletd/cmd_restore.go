package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpulet/gpuletd/internal/dirlock"
	"github.com/gpulet/gpuletd/profiler/store"
)

func newRestoreCmd(g *globalFlags) *cobra.Command {
	var check, withoutHistory bool
	cmd := &cobra.Command{
		Use:   "restore FILE",
		Short: "Put a backup (gpuletd backup) in place of the database of the configured state_dir",
		Long: `Put the database in FILE, a backup made by "gpuletd backup", in place of the
database in the configured state_dir, with the daemon stopped. FILE is checked
first (a damaged file, another program's database or one a newer gpuletd
wrote is refused, and nothing changes). The database it replaces is not
deleted: it moves aside, renamed gpuletd.db.before-restore-<time>, with its
write-ahead log. The next start serves from the restored database (migrating
a backup of an older gpuletd) and re-plans from its profiles; models of the
repository it has no profile for are profiled as usual.

Stop the daemon first (sudo systemctl stop gpuletd): restore refuses while a
gpuletd serves from the state_dir. Run as root, it gives the restored file to
the state_dir's owner, so that the service's user can write it.

With --without-history, the backup's events and plans are left out: a node
restored from another node's backup gets its measurements, not its history.

With --check, FILE is only checked and what it holds printed: nothing else is
read or changed, and no daemon needs stopping.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if check {
				sum, err := store.Inspect(cmd.Context(), args[0])
				if err != nil {
					return &exitError{code: 1, msg: "gpuletd: " + err.Error()}
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s: %s\n", args[0], describeDatabase(sum))
				return nil
			}
			l, err := g.loadConfig()
			if err != nil {
				return err
			}
			dir := l.Config.StateDir
			if err := g.stateDirHint(dir); err != nil {
				return err
			}
			lock, err := dirlock.Lock(dir)
			if errors.Is(err, dirlock.ErrInUse) {
				return &exitError{code: 1, msg: fmt.Sprintf("gpuletd: a gpuletd serves from state_dir %s%s: stop it first (sudo systemctl stop gpuletd), restore, then start it again",
					dir, dirlock.Holder(dir))}
			}
			if err != nil {
				return fmt.Errorf("lock state_dir %s: %w", dir, err)
			}
			defer lock.Close()
			dst := filepath.Join(dir, store.FileName)
			suffix := ".before-restore-" + time.Now().UTC().Format("20060102T150405Z")
			ctx, cancel := context.WithTimeout(cmd.Context(), backupTimeout)
			defer cancel()
			r, err := store.Restore(ctx, dst, args[0], suffix, store.RestoreOptions{WithoutHistory: withoutHistory})
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "restored %s into %s: %s\n", args[0], dst, describeDatabase(r.Summary))
			if v := store.SchemaVersion(); r.Summary.SchemaVersion < v {
				fmt.Fprintf(w, "its schema is migrated from version %d to %d when the daemon starts\n", r.Summary.SchemaVersion, v)
			}
			if r.Aside != "" {
				fmt.Fprintf(w, "the database it replaced is at %s: remove it once the daemon serves as it should\n", r.Aside)
			}
			fmt.Fprintln(w, "start the daemon: sudo systemctl start gpuletd")
			return nil
		},
	}
	cmd.Flags().BoolVar(&check, "check", false, "only check FILE and say what it holds")
	cmd.Flags().BoolVar(&withoutHistory, "without-history", false, "keep the backup's profiles, device types and models, not its events and plans (a backup of another node)")
	return cmd
}
