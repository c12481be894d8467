package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/gpulet/gpuletd/internal/atomicfile"
	"github.com/gpulet/gpuletd/internal/fsperm"
)

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
func Restore(ctx context.Context, dst, src, suffix string) (Restored, error) {
	var r Restored
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
	if err := fsperm.GiveToDirOwner(dst); err != nil {
		return r, fmt.Errorf("restore %s: %w", dst, err)
	}
	return r, nil
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
