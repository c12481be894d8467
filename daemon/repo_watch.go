package daemon

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"go.uber.org/zap"

	"github.com/gpulet/gpuletd/daemon/repository"
	"github.com/gpulet/gpuletd/profiler/store"
)

// Following the model repository on disk.
//
// The daemon reads the repository at start; afterwards the repository API
// loads and unloads models (Triton's explicit model control). An operator
// who edits the repository instead (copies a model folder in, replaces a
// model file or a configuration, removes a folder) has it followed on
// `systemctl reload gpuletd` (SIGHUP) and, when repository_poll is set,
// every that often (Triton's poll mode). What is followed is what changed
// on disk since the daemon last read a folder: a folder that appeared or
// changed is loaded (again) as the API's load does, one that disappeared is
// unloaded. A folder left as it was is left alone, so a model the API
// unloaded stays unloaded until its folder changes or the API loads it
// again. A poll acts on a folder once two polls in a row saw it the same
// (or both saw it gone), so a folder still being copied is not loaded
// half-written; a reload, which an operator asks for when done, acts at
// once.

// folderPrint is what a model folder held when read: every file's path,
// device and inode, size, modification time and status change time (as
// the digest cache keys a file: repository.FileStamp), and every folder's
// path. The inode and the status change time catch a file replaced by
// another of the same size and modification time: files unpacked from an archive whose times
// were set to one date, a Nix store's (every file's time is 1), a version
// link switched between two such files. A status change time moves with
// every write, and nobody can set it back.
type folderPrint string

// printFolder reads dir's print, following symbolic links to folders and
// files (a repository may link its model or version folders from
// elsewhere, and switch versions by relinking). Names starting with a dot
// (editors' and copy tools' temporary files) are left out.
func printFolder(dir string) (folderPrint, error) {
	var b strings.Builder
	if err := printInto(&b, dir, ".", 0); err != nil {
		return "", err
	}
	return folderPrint(b.String()), nil
}

// maxPrintDepth bounds how deep printInto descends (a link loop ends there).
const maxPrintDepth = 8

// printInto writes the print of folder dir, named rel in the model folder.
func printInto(b *strings.Builder, dir, rel string, depth int) error {
	if depth > maxPrintDepth {
		return fmt.Errorf("read %s: folders nested deeper than %d (a link loop?)", dir, maxPrintDepth)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	fmt.Fprintf(b, "%s/\n", rel) // its entries say what changed in it (its own time moves with hidden ones too)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			continue
		}
		path, name := filepath.Join(dir, e.Name()), filepath.Join(rel, e.Name())
		if repository.IsFolder(dir, e) {
			if err := printInto(b, path, name, depth+1); err != nil {
				return err
			}
			continue
		}
		info, err := os.Stat(path) // a link's target
		if err != nil {
			return err
		}
		fmt.Fprintf(b, "%s %v %s\n", name, info.Mode().Type(), repository.FileStamp(info))
	}
	return nil
}

// printRepository reads the print of every model folder in the
// repositories (printName). A folder that cannot be read (its permissions
// being changed, say) is listed in unreadable instead: it is neither loaded
// nor unloaded until it can be.
func printRepository(roots []string) (prints map[string]folderPrint, unreadable []string, err error) {
	folders, _, err := repository.Roots(roots).Folders()
	if err != nil {
		return nil, nil, err
	}
	prints = map[string]folderPrint{}
	for _, f := range folders {
		p, err := printName(f.Holders, f.Name)
		switch {
		case err == nil:
			prints[f.Name] = p
		case !errors.Is(err, fs.ErrNotExist): // not removed while read
			unreadable = append(unreadable, f.Name)
		}
	}
	return prints, unreadable, nil
}

// printName is the print of the model folder name in the repositories that
// hold it: its folder's, or with more than one, each folder's after its
// repository, so that a copy appearing in a second repository, or leaving
// it, changes the print too.
func printName(holders []string, name string) (folderPrint, error) {
	switch len(holders) {
	case 0:
		return "", fmt.Errorf("print model folder %s: %w", name, fs.ErrNotExist)
	case 1:
		return printFolder(filepath.Join(holders[0], name))
	}
	var b strings.Builder
	for _, root := range holders {
		p, err := printFolder(filepath.Join(root, name))
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "%s\n%s", root, p)
	}
	return folderPrint(b.String()), nil
}

// goneFolder is what a poll saw of a folder that is no longer there; no
// print of a folder starts with a NUL.
const goneFolder folderPrint = "\x00gone"

// repoWatch remembers what the daemon last read of each model folder.
type repoWatch struct {
	mu sync.Mutex
	// read is each folder as the daemon last read it (to load it, or at
	// start whatever became of it).
	read map[string]folderPrint
	// seen is each changed folder as the last poll saw it, before acting.
	seen map[string]folderPrint
}

func newRepoWatch(read map[string]folderPrint) *repoWatch {
	if read == nil {
		read = map[string]folderPrint{}
	}
	return &repoWatch{read: read, seen: map[string]folderPrint{}}
}

// changes compares the folders now on disk with what was read: the folders
// to load (new or changed) and those to unload (gone), both sorted. With
// settle (a poll) a folder counts once the previous poll saw it as it is
// now, gone included: a tool that syncs the repository by removing and
// writing folders again does not unload them in between.
func (w *repoWatch) changes(now map[string]folderPrint, unreadable []string, settle bool) (load, unload []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, name := range unreadable {
		if r, ok := w.read[name]; ok {
			now[name] = r // as last read, until it can be read again
		}
	}
	for name, p := range now {
		if r, ok := w.read[name]; ok && r == p {
			delete(w.seen, name)
			continue
		}
		if settle && w.seen[name] != p {
			w.seen[name] = p
			continue
		}
		load = append(load, name)
	}
	for name := range w.read {
		if _, ok := now[name]; ok {
			continue
		}
		if settle && w.seen[name] != goneFolder {
			w.seen[name] = goneFolder
			continue
		}
		unload = append(unload, name)
	}
	for name, p := range w.seen {
		if _, ok := now[name]; !ok && p != goneFolder {
			delete(w.seen, name)
		}
	}
	slices.Sort(load)
	slices.Sort(unload)
	return load, unload
}

// markRead records folder name as read with print p (none: gone).
func (w *repoWatch) markRead(name string, p folderPrint, ok bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.seen, name)
	if !ok {
		delete(w.read, name)
		return
	}
	w.read[name] = p
}

// noteLoaded records, after a load through the API, the folder as the load
// read it, so that a poll does not load it again for the same change.
func (n *node) noteLoaded(name string) {
	if n.repo == nil {
		return
	}
	p, err := printName(n.catalog.roots.Holders(name), name)
	n.repo.markRead(name, p, err == nil)
}

// syncRepository loads the model folders that appeared or changed on disk
// since last read and unloads those that disappeared (with settle, a poll:
// only folders that held still since the previous poll). Each load or
// unload re-plans as the repository API's does, and says what it did and
// why in an event.
func (n *node) syncRepository(ctx context.Context, settle bool) {
	now, unreadable, err := printRepository(n.catalog.roots)
	if err != nil {
		n.log.Warn("follow the model repository", zap.Error(err))
		return
	}
	for _, name := range unreadable {
		n.log.Warn("follow the model repository: a model folder cannot be read; it stays as it was", zap.String("model", name))
	}
	load, unload := n.repo.changes(now, unreadable, settle)
	for _, name := range unload {
		n.repo.markRead(name, "", false)
		n.catalog.noteBroken(name, nil) // gone: not broken either
		if n.catalog.serves(name) {
			n.events.add(EventModelUnload, store.SeverityInfo, name+" left the model repository: unloading it", map[string]string{"model": name})
			if ierr := n.unloadModel(ctx, name, false); ierr != nil {
				n.events.add(EventModelUnload, store.SeverityWarning, fmt.Sprintf("unloading %s failed: %s", name, ierr.msg),
					map[string]string{"model": name})
			}
		}
		n.catalog.forgetUnloaded(name) // gone: there is nothing to load again
	}
	for _, name := range load {
		if ctx.Err() != nil {
			return
		}
		what := "appeared in"
		if n.catalog.serves(name) {
			what = "changed in"
		}
		n.events.add(EventModelLoad, store.SeverityInfo, fmt.Sprintf("%s %s the model repository: loading it", name, what), map[string]string{"model": name})
		n.repo.markRead(name, now[name], true)
		n.loadModel(ctx, name, loadRequest{}) // a failure is its own event (loadFailed)
	}
}
