package repository

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// maxLabelFile bounds a label file: ImageNet's thousand labels take 30 KB.
const maxLabelFile = 16 << 20

// readLabels reads the label files the configuration names (Triton's
// output label_filename), one label per line, into m.Labels; a file that
// cannot be read makes the model invalid, as in Triton.
func (m *Model) readLabels() error {
	for _, out := range sortedKeys(m.Config.LabelFiles) {
		f := filepath.Join(m.Dir, m.Config.LabelFiles[out])
		st, err := os.Stat(f)
		if err == nil && st.Size() > maxLabelFile {
			err = fmt.Errorf("%d bytes, above %d", st.Size(), maxLabelFile)
		}
		var data []byte
		if err == nil {
			data, err = os.ReadFile(f)
		}
		if err != nil {
			return invalidFile(f, fmt.Sprintf("the label file of output %q", out), err)
		}
		if m.Labels == nil {
			m.Labels = map[string][]string{}
		}
		m.Labels[out] = strings.Split(strings.TrimRight(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n"), "\n")
	}
	return nil
}

// invalidFile is invalid for a file of the model folder that could not be
// read (what says which), naming the file once.
func invalidFile(f, what string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err // the file is named once, by invalid
	}
	return invalid(f, fmt.Errorf("%s: %w", what, err))
}
