package daemon

import (
	"context"
	"errors"
	"io/fs"
	"os"

	"go.uber.org/zap"

	"github.com/gpulet/gpuletd/daemon/repository"
	"github.com/gpulet/gpuletd/profiler/store"
)

// keepDigests restores the model files' digests the database kept and has
// those computed from now on kept there, so that a restart reads no
// unchanged model file to find its sha256 (a repository of large models
// was read whole at every start). The digest of a file no longer there is
// forgotten. A database that cannot be read or written costs only the
// reading of the files, as before.
func (c *catalog) keepDigests(ctx context.Context) {
	if c.st == nil || c.opts.Digests == nil {
		return
	}
	stored, err := c.st.FileDigests(ctx)
	if err != nil {
		c.log.Warn("read the model files' kept digests: every model file is read again", zap.Error(err))
	}
	var kept []repository.KeptDigest
	for _, d := range stored {
		if _, err := os.Stat(d.Path); errors.Is(err, fs.ErrNotExist) {
			if err := c.st.DeleteFileDigest(ctx, d.Path, d.Platform); err != nil && !store.Unwritable(err) {
				c.log.Warn("forget the digest of a model file gone", zap.String("path", d.Path), zap.Error(err))
			}
			continue
		}
		kept = append(kept, repository.KeptDigest{Path: d.Path, Platform: d.Platform, Entry: d.Entry})
	}
	if err := c.opts.Digests.Restore(kept); err != nil {
		c.log.Warn("some kept model file digests are unreadable: those files are read again", zap.Error(err))
	}
	c.opts.Digests.Keep(func(k repository.KeptDigest) {
		err := c.st.PutFileDigest(ctx, store.FileDigest{Path: k.Path, Platform: k.Platform, Entry: k.Entry})
		if err != nil && !store.Unwritable(err) && ctx.Err() == nil {
			c.log.Warn("keep a model file's digest", zap.String("path", k.Path), zap.Error(err))
		}
	})
}
