package repository

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
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
		if !errors.Is(err, os.ErrNotExist) {
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
