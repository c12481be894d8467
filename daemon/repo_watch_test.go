package daemon

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/daemon/repository"
)

func TestPrintFolder(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "1"), 0o755))
	file := filepath.Join(dir, "1", "model.onnx")
	require.NoError(t, os.WriteFile(file, []byte("abc"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "config.yaml"), []byte("slo: 5ms\n"), 0o644))
	first, err := printFolder(dir)
	require.NoError(t, err)

	require.NoError(t, os.WriteFile(filepath.Join(dir, ".config.yaml.swp"), []byte("x"), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, ".partial"), 0o755))
	p, err := printFolder(dir)
	require.NoError(t, err)
	require.Equal(t, first, p, "hidden names are left out")

	require.NoError(t, os.WriteFile(file, []byte("abcd"), 0o644))
	grown, err := printFolder(dir)
	require.NoError(t, err)
	require.NotEqual(t, first, grown, "a file of another size")

	later := time.Now().Add(time.Hour)
	require.NoError(t, os.Chtimes(file, later, later))
	touched, err := printFolder(dir)
	require.NoError(t, err)
	require.NotEqual(t, grown, touched, "a file written again at the same size")

	// Another file of the same size given the same times, as unpacking
	// an archive whose times were set to one date does.
	require.NoError(t, os.WriteFile(file+".new", []byte("wxyz"), 0o644))
	require.NoError(t, os.Chtimes(file+".new", later, later))
	require.NoError(t, os.Rename(file+".new", file))
	replaced, err := printFolder(dir)
	require.NoError(t, err)
	require.NotEqual(t, touched, replaced, "a file replaced by another of the same size and times")
	time.Sleep(20 * time.Millisecond) // past a tick of the kernel's coarse clock, which stamps status changes
	require.NoError(t, os.WriteFile(file, []byte("WXYZ"), 0o644))
	require.NoError(t, os.Chtimes(file, later, later))
	rewritten, err := printFolder(dir)
	require.NoError(t, err)
	require.NotEqual(t, replaced, rewritten, "a file written in place and given its times back")

	_, err = printFolder(filepath.Join(dir, "nope"))
	require.ErrorIs(t, err, os.ErrNotExist)
}

// The prints of several repositories: a folder's print is its own while
// one repository holds it, and changes when a copy appears in another or
// leaves it, so that a poll reads the name again.
func TestPrintRepositories(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	for _, dir := range []string{filepath.Join(a, "m"), filepath.Join(b, "n"), filepath.Join(a, ".hidden")} {
		require.NoError(t, os.MkdirAll(dir, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "config.yaml"), []byte("slo: 5ms\n"), 0o644))
	}
	alone, err := printFolder(filepath.Join(a, "m"))
	require.NoError(t, err)
	prints, unreadable, err := printRepository([]string{a, b})
	require.NoError(t, err)
	require.Empty(t, unreadable)
	require.Equal(t, []string{"m", "n"}, slices.Sorted(maps.Keys(prints)))
	require.Equal(t, alone, prints["m"])

	require.NoError(t, os.CopyFS(filepath.Join(b, "m"), os.DirFS(filepath.Join(a, "m"))))
	twice, _, err := printRepository([]string{a, b})
	require.NoError(t, err)
	require.NotEqual(t, alone, twice["m"], "a copy in a second repository")
	p, err := printName(repository.Roots{a, b}.Holders("m"), "m")
	require.NoError(t, err)
	require.Equal(t, twice["m"], p, "a load's print is the poll's")
	require.Equal(t, prints["n"], twice["n"])

	require.NoError(t, os.RemoveAll(filepath.Join(a, "m")))
	moved, _, err := printRepository([]string{a, b})
	require.NoError(t, err)
	require.NotEqual(t, twice["m"], moved["m"], "the first copy gone")
	_, err = printName(nil, "gone")
	require.ErrorIs(t, err, os.ErrNotExist)

	_, _, err = printRepository([]string{a, filepath.Join(b, "none")})
	require.Error(t, err, "a repository that cannot be read")
}

func TestRepoWatchChanges(t *testing.T) {
	type look struct {
		now        map[string]folderPrint
		unreadable []string
		settle     bool
		load       []string
		unload     []string
	}
	start := map[string]folderPrint{"a": "a1", "b": "b1"}
	cases := []struct {
		name  string
		looks []look
	}{
		{"nothing changed", []look{{now: map[string]folderPrint{"a": "a1", "b": "b1"}, settle: true}}},
		{"a reload loads what changed at once", []look{
			{now: map[string]folderPrint{"a": "a2", "b": "b1", "c": "c1"}, load: []string{"a", "c"}},
			{now: map[string]folderPrint{"a": "a2", "b": "b1", "c": "c1"}}}},
		{"a poll waits for a folder to hold still", []look{
			{now: map[string]folderPrint{"a": "a1", "b": "b1", "c": "c1"}, settle: true},
			{now: map[string]folderPrint{"a": "a1", "b": "b1", "c": "c2"}, settle: true},
			{now: map[string]folderPrint{"a": "a1", "b": "b1", "c": "c2"}, settle: true, load: []string{"c"}},
			{now: map[string]folderPrint{"a": "a1", "b": "b1", "c": "c2"}, settle: true}}},
		{"a folder changed back before it held still", []look{
			{now: map[string]folderPrint{"a": "a2", "b": "b1"}, settle: true},
			{now: map[string]folderPrint{"a": "a1", "b": "b1"}, settle: true},
			{now: map[string]folderPrint{"a": "a2", "b": "b1"}, settle: true}}},
		{"a reload unloads a removed folder at once", []look{
			{now: map[string]folderPrint{"a": "a1"}, unload: []string{"b"}},
			{now: map[string]folderPrint{"a": "a1"}, settle: true}}},
		{"a poll unloads a folder two polls saw gone, once", []look{
			{now: map[string]folderPrint{"a": "a1"}, settle: true},
			{now: map[string]folderPrint{"a": "a1"}, settle: true, unload: []string{"b"}},
			{now: map[string]folderPrint{"a": "a1"}, settle: true}}},
		{"a folder gone for one poll stays", []look{
			{now: map[string]folderPrint{"a": "a1"}, settle: true},
			{now: map[string]folderPrint{"a": "a1", "b": "b1"}, settle: true},
			{now: map[string]folderPrint{"a": "a1", "b": "b1"}, settle: true}}},
		{"a folder written again after a poll saw it gone", []look{
			{now: map[string]folderPrint{"a": "a1"}, settle: true},
			{now: map[string]folderPrint{"a": "a1", "b": "b2"}, settle: true},
			{now: map[string]folderPrint{"a": "a1", "b": "b2"}, settle: true, load: []string{"b"}}}},
		{"an unreadable folder stays as it was", []look{
			{now: map[string]folderPrint{"a": "a1"}, unreadable: []string{"b"}, settle: true},
			{now: map[string]folderPrint{"a": "a1"}, unreadable: []string{"b", "x"}}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			read := map[string]folderPrint{}
			for k, v := range start {
				read[k] = v
			}
			w := newRepoWatch(read)
			for i, l := range tc.looks {
				load, unload := w.changes(l.now, l.unreadable, l.settle)
				require.Equal(t, l.load, load, "look %d", i)
				require.Equal(t, l.unload, unload, "look %d", i)
				// The caller reads what it acts on.
				for _, name := range load {
					w.markRead(name, l.now[name], true)
				}
				for _, name := range unload {
					w.markRead(name, "", false)
				}
			}
		})
	}
}

// A model folder whose version folder is a link (a deployment that switches
// versions by relinking) prints what the link reaches: relinking it, or
// writing a file behind it, is a change.
func TestPrintFolderFollowsLinks(t *testing.T) {
	store := t.TempDir()
	for v, content := range map[string]string{"a": "abc", "b": "abcd"} {
		require.NoError(t, os.MkdirAll(filepath.Join(store, v), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(store, v, "model.onnx"), []byte(content), 0o644))
	}
	dir := t.TempDir()
	link := filepath.Join(dir, "1")
	require.NoError(t, os.Symlink(filepath.Join(store, "a"), link))
	first, err := printFolder(dir)
	require.NoError(t, err)
	require.Contains(t, string(first), "1/model.onnx ")

	require.NoError(t, os.Remove(link))
	require.NoError(t, os.Symlink(filepath.Join(store, "b"), link))
	relinked, err := printFolder(dir)
	require.NoError(t, err)
	require.NotEqual(t, first, relinked)

	require.NoError(t, os.WriteFile(filepath.Join(store, "b", "model.onnx"), []byte("abcde"), 0o644))
	written, err := printFolder(dir)
	require.NoError(t, err)
	require.NotEqual(t, relinked, written)

	require.NoError(t, os.Symlink(dir, filepath.Join(dir, "loop")))
	_, err = printFolder(dir)
	require.ErrorContains(t, err, "a link loop?")
}
