package workload

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"gopkg.in/yaml.v3"
)

// ErrFormat is returned for a file that is not a well-formed workload: YAML
// that does not parse, an unknown field, a value of the wrong type, more
// than one document. Messages name the line.
var ErrFormat = errors.New("bad workload file")

// maxFileSize bounds what Decode reads.
const maxFileSize = 8 << 20

// Decode reads a workload strictly and validates it. name is used in
// messages.
func Decode(r io.Reader, name string) (*Workload, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("read workload %s: %w", name, err)
	}
	if len(data) > maxFileSize {
		return nil, fmt.Errorf("read workload %s: %w: larger than %d bytes", name, ErrFormat, maxFileSize)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var w Workload
	if err := dec.Decode(&w); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("decode workload %s: %w: empty", name, ErrFormat)
		}
		return nil, fmt.Errorf("decode workload %s: %w: %v", name, ErrFormat, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("decode workload %s: %w: more than one YAML document", name, ErrFormat)
	}
	if err := w.Validate(); err != nil {
		return nil, fmt.Errorf("validate workload %s: %w", name, err)
	}
	return &w, nil
}

// Load reads and validates a workload file.
func Load(path string) (*Workload, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open workload: %w", err)
	}
	defer f.Close()
	w, err := Decode(f, path)
	if err != nil {
		return nil, err
	}
	w.Dir = filepath.Dir(path)
	return w, nil
}
