package main

import (
	"errors"
	"os"
	"path/filepath"

	"github.com/gpulet/gpuletd/internal/dirlock"
	"github.com/gpulet/gpuletd/profiler/store"
)

// withStateDir hands read the path of the configured state_dir's database,
// for a command that reads it while no daemon answers (backup, events),
// and returns that path. When no daemon holds the state directory this
// holds it while read runs (alone), so that what SQLite makes beside the
// database to read it may be removed again (made by a command run as root,
// it would belong to the wrong user when the service starts); a daemon
// that holds it has both open already.
func withStateDir(g *globalFlags, read func(path string, alone bool) error) (string, error) {
	l, err := g.loadConfig()
	if err != nil {
		return "", err
	}
	dir := l.Config.StateDir
	path := filepath.Join(dir, store.FileName)
	lock, err := dirlock.Lock(dir)
	alone := err == nil
	if alone {
		defer lock.Close()
	}
	return path, read(path, alone)
}

// ownerHint is what to do when reading state_dir's database was refused.
func ownerHint(err error) string {
	if errors.Is(err, os.ErrPermission) {
		return " (run it as root, or as the owner of state_dir)"
	}
	return ""
}
