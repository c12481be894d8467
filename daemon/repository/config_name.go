package repository

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// Triton's custom model configurations (--model-config-name): a folder may
// hold configs/<name>.pbtxt beside its config.pbtxt, and a server started
// with that name serves it with the first where the folder has one, else
// with the second. One repository shared by servers of different GPUs
// gives each its own settings (batch sizes, SLOs, files) that way.

// CustomConfigDir is the folder of a model's custom configurations.
const CustomConfigDir = "configs"

// ReadTritonConfig reads the Triton configuration folder dir serves with
// under the configuration name: configs/<name>.pbtxt where there is one
// (name not empty), else config.pbtxt. It gives the file's name inside the
// folder, its bytes and the read's error (fs.ErrNotExist: the folder has
// none).
func ReadTritonConfig(dir, name string) (string, []byte, error) {
	if name != "" {
		custom := filepath.Join(CustomConfigDir, name+".pbtxt")
		b, err := os.ReadFile(filepath.Join(dir, custom))
		if !errors.Is(err, os.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) { // a file named configs holds none
			return custom, b, err
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, TritonConfigFile))
	return TritonConfigFile, b, err
}

// IsCustomConfig tells whether rel, a path inside a model folder, is a
// custom configuration (configs/<name>.pbtxt).
func IsCustomConfig(rel string) bool {
	dir, file := filepath.Split(filepath.ToSlash(rel))
	return dir == CustomConfigDir+"/" && strings.HasSuffix(file, ".pbtxt")
}

// tritonConfigFile is the Triton configuration m was read from, inside its
// folder (config.pbtxt, or configs/<name>.pbtxt); config.pbtxt when it was
// read from none.
func (m *Model) tritonConfigFile() string {
	if i := slices.IndexFunc(m.ConfigFiles, func(f string) bool { return strings.HasSuffix(f, ".pbtxt") }); i >= 0 {
		return m.ConfigFiles[i]
	}
	return TritonConfigFile
}

// customConfigNames are the names of the custom configurations the model
// folder dir holds (configs/<name>.pbtxt); none when it has no configs
// folder or it cannot be read (the folder's load says why it matters).
func customConfigNames(dir string) []string {
	entries, err := os.ReadDir(filepath.Join(dir, CustomConfigDir))
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if name, ok := strings.CutSuffix(e.Name(), ".pbtxt"); ok && name != "" && !strings.HasPrefix(name, ".") {
			out = append(out, name)
		}
	}
	return out
}

// CustomConfigured are the model folders (families, sorted) that serve
// with their custom configuration of the index's ConfigName.
func (ix *Index) CustomConfigured() []string {
	if ix.ConfigName == "" {
		return nil
	}
	custom := filepath.Join(CustomConfigDir, ix.ConfigName+".pbtxt")
	var out []string
	for _, m := range ix.Models {
		if slices.Contains(m.ConfigFiles, custom) {
			out = append(out, m.Family)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// ConfigNameNote says which folders serve with the custom configuration
// the index was read under, or, when none does (a name misspelt, or a
// repository not laid out for it), warns so with the names the folders do
// hold: a custom configuration name no folder has changes nothing, and
// Triton says nothing of it. "" when no name is set.
func (ix *Index) ConfigNameNote() (note string, warn bool) {
	if ix.ConfigName == "" {
		return "", false
	}
	file := CustomConfigDir + "/" + ix.ConfigName + ".pbtxt"
	if used := ix.CustomConfigured(); len(used) > 0 {
		return fmt.Sprintf("model_config_name %s: %s serves %s; the other folders serve with their %s", ix.ConfigName, file, strings.Join(used, ", "), TritonConfigFile), false
	}
	held := ""
	if len(ix.CustomNames) > 0 {
		held = fmt.Sprintf(" (the folders' %s hold %s.pbtxt)", CustomConfigDir, strings.Join(ix.CustomNames, ".pbtxt, "))
	}
	return fmt.Sprintf("model_config_name %s: no model folder serves with a %s%s; each serves with its %s", ix.ConfigName, file, held, TritonConfigFile), true
}
