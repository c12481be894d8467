package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/gpulet/gpuletd/internal/atomicfile"
	"github.com/gpulet/gpuletd/internal/fsperm"
)

// RestoreOptions change what Restore keeps of a backup.
type RestoreOptions struct {
	// WithoutHistory drops the backup's events and plans and keeps the
	// rest (profiles, device types, models): a node restored from another
	// node's backup gets its measurements, not its history.
	WithoutHistory bool
}

// Restored is what Restore did.
type Restored struct {
	// Summary is what the restored database holds.
	Summary Summary
	// Aside is where the database it replaced now is (its write-ahead log
	// and index beside it under the same name); "" when there was none.
	Aside string
}

// Restore puts a copy of the backup file at src in place of the database
// at dst. src must pass Inspect; a schema older than this build's is
// migrated by the next Open. The files of the database at dst (its
// write-ahead log and index with it, which hold writes the main file may
// not have yet) move aside, renamed to dst + suffix, so that nothing is
// lost; the copy, written beside dst and synced, then takes dst's name
// with the mode of the database it replaces (0640 where there was none)
// and, when this process may give files away (root), the owner of dst's
// directory. No process may have dst open meanwhile: the caller holds the
// state directory's lock (package dirlock), as a daemon does while it
// serves. Where the names dst + suffix are taken, a number follows them.
func Restore(ctx context.Context, dst, src, suffix string, o RestoreOptions) (Restored, error) {
	var r Restored
	if who := MeasuringInto(dst); len(who) > 0 {
		// Its points would go to the database moved aside.
		return r, fmt.Errorf("restore %s: %w: %s measures a profile into it now; let it finish, or stop it, then restore",
			dst, ErrBusy, strings.Join(who, ", "))
	}
	sum, err := Inspect(ctx, src)
	if err != nil {
		return r, fmt.Errorf("restore %s: %w", dst, err)
	}
	r.Summary = sum
	data, err := os.ReadFile(src)
	if err != nil {
		return r, fmt.Errorf("restore %s: %w", dst, err)
	}
	mode := fs.FileMode(0o640)
	if fi, err := os.Stat(dst); err == nil {
		mode = fi.Mode().Perm()
	} else if !errors.Is(err, fs.ErrNotExist) {
		return r, fmt.Errorf("restore %s: %w", dst, err)
	}
	moved, err := moveAside(dst, freeName(dst+suffix))
	if err != nil {
		return r, fmt.Errorf("restore %s: %w", dst, errors.Join(err, moveBack(moved)))
	}
	if err := atomicfile.Write(dst, data, mode); err != nil {
		// A full disk, say: the database it was to replace goes back.
		return r, fmt.Errorf("restore %s: %w", dst, errors.Join(err, moveBack(moved)))
	}
	if len(moved) > 0 && moved[0][0] == dst {
		r.Aside = moved[0][1]
	}
	if o.WithoutHistory {
		if err := forgetHistory(ctx, dst); err != nil {
			return r, fmt.Errorf("restore %s: %w", dst, err)
		}
		if r.Summary, err = Inspect(ctx, dst); err != nil {
			return r, fmt.Errorf("restore %s: %w", dst, err)
		}
	}
	if err := fsperm.GiveToDirOwner(dst); err != nil {
		return r, fmt.Errorf("restore %s: %w", dst, err)
	}
	return r, nil
}

// forgetHistory deletes the events and plans of the database at path,
// which no other process has open, and compacts it. Closing the one
// connection checkpoints its log and removes it.
func forgetHistory(ctx context.Context, path string) error {
	db := sql.OpenDB(newConnector(path, connWriter, DefaultBusyTimeout, 0))
	defer db.Close()
	db.SetMaxOpenConns(1)
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return wrap("drop the history", err)
	}
	for _, table := range []string{"events", "plans"} {
		if _, err := tx.ExecContext(ctx, "DELETE FROM "+table); err != nil {
			_ = tx.Rollback()
			return wrap("drop the history: "+table, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return wrap("drop the history", err)
	}
	if _, err := db.ExecContext(ctx, "VACUUM"); err != nil {
		return wrap("compact the database", err)
	}
	return wrap("close the database", db.Close())
}

// freeName is name, or name-2, name-3… when the files of a database of that
// name (Files) exist: two restores in one second keep both databases.
func freeName(name string) string {
	for i := 1; ; i++ {
		try := name
		if i > 1 {
			try = fmt.Sprintf("%s-%d", name, i)
		}
		taken := false
		for _, p := range Files(try) {
			if _, err := os.Lstat(p); err == nil {
				taken = true
			}
		}
		if !taken {
			return try
		}
	}
}

// moveAside renames the database files of dst (Files) to those of aside,
// refusing to replace any file already there. It returns the renames done,
// each as {from, to}, also when it fails part way.
func moveAside(dst, aside string) ([][2]string, error) {
	from, to := Files(dst), Files(aside)
	for _, p := range to {
		if _, err := os.Lstat(p); err == nil {
			return nil, fmt.Errorf("move the database aside: %s exists", p)
		}
	}
	var moved [][2]string
	for i := range from {
		err := os.Rename(from[i], to[i])
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue
		case err != nil:
			return moved, fmt.Errorf("move the database aside: %w", err)
		}
		moved = append(moved, [2]string{from[i], to[i]})
	}
	return moved, nil
}

// moveBack undoes the renames of moveAside.
func moveBack(moved [][2]string) error {
	var errs []error
	for _, m := range moved {
		if err := os.Rename(m[1], m[0]); err != nil {
			errs = append(errs, fmt.Errorf("move the database back: %w", err))
		}
	}
	return errors.Join(errs...)
}
