package loadgen

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/gpulet/gpuletd/executor/tensor"
	"github.com/gpulet/gpuletd/kserve"
)

// ReadInputDir takes perf_analyzer's --input-data DIR: a folder with a
// file for each of the model's inputs, named after it, holding one
// request's data (of a batch of one): a fixed-size type's bytes as they
// lie in memory (row-major, little-endian), a BYTES input's elements a
// line each. Files of other names are not read, but one named after an
// output (perf_analyzer's expected answer) is refused: gpuletd load does
// not check answers. The files are read for the model's inputs when the
// run starts.
func ReadInputDir(dir string) (*InputData, error) {
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("%w: input data: %v", ErrConfig, err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("%w: input data: %s is not a folder", ErrConfig, dir)
	}
	return &InputData{dir: dir}, nil
}

// IsDir says the input data is a folder (ReadInputDir): binary tensors.
func (d *InputData) IsDir() bool { return d != nil && d.dir != "" }

// maxInputFile bounds one input's file: the most a request's input holds.
const maxInputFile = maxPayloadElements * 8

// dirPayload is the request the folder dir gives m: its inputs as binary
// tensors.
func dirPayload(m *Model, dir string) (*Payload, error) {
	req, raw, err := requestInputs(m, func(in kserve.TensorMetadata) (kserve.RequestInput, []byte, error) {
		data, err := readInputFile(dir, in.Name)
		if errors.Is(err, fs.ErrNotExist) {
			return kserve.RequestInput{}, nil, fmt.Errorf("no file for input %q (named after it, as perf_analyzer reads a folder)", in.Name)
		}
		if err != nil {
			return kserve.RequestInput{}, nil, err
		}
		ri, data, err := fileInput(m, in.Name, in.DataType, in.Shape, data)
		if err != nil {
			return ri, nil, fmt.Errorf("input %q: %w", in.Name, err)
		}
		return ri, data, nil
	})
	if err != nil {
		return nil, err
	}
	for _, out := range m.Metadata.Outputs {
		if filepath.IsLocal(out.Name) {
			if _, err := os.Stat(filepath.Join(dir, out.Name)); err == nil {
				return nil, fmt.Errorf("%s is output %q's expected answer, which gpuletd load does not check; move it out (gpuletd infer prints an answer to compare)", filepath.Join(dir, out.Name), out.Name)
			}
		}
	}
	return requestPayload(req, raw)
}

// readInputFile reads the file of input name in dir, at most maxInputFile
// bytes.
func readInputFile(dir, name string) ([]byte, error) {
	if !filepath.IsLocal(name) {
		return nil, fmt.Errorf("input %q names no file in a folder", name)
	}
	path := filepath.Join(dir, name)
	fi, err := os.Stat(path)
	switch {
	case err != nil:
		return nil, err
	case !fi.Mode().IsRegular():
		return nil, fmt.Errorf("%s is not a file", path)
	case fi.Size() > maxInputFile:
		return nil, fmt.Errorf("%s holds %d bytes, more than a request's input may (%d)", path, fi.Size(), maxInputFile)
	}
	return os.ReadFile(path)
}

// fileInput is one input read from its file: its request input and binary
// data.
func fileInput(m *Model, name, dataType string, declared []int64, data []byte) (kserve.RequestInput, []byte, error) {
	ri, dt, n, err := requestInput(m, name, dataType, declared, nil)
	if err != nil {
		return ri, nil, err
	}
	if dt != tensor.Bytes {
		if data, err = fixedRows(m, ri, dt, n, data, "its file"); err != nil {
			return ri, nil, err
		}
		return binaryInput(ri, data)
	}
	// A line each element, the last line's end optional.
	lines := bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
	if rows := int64(max(m.Rows, 1)); rows > 1 && int64(len(lines))*rows == n {
		lines = slices.Repeat(lines, int(rows)) // one row's elements, for each row
	}
	if int64(len(lines)) != n {
		return ri, nil, fmt.Errorf("its file holds %d lines (elements); shape %v holds %d", len(lines), ri.Shape, n)
	}
	var out []byte
	for _, l := range lines {
		out = tensor.AppendBytesElement(out, l)
	}
	return binaryInput(ri, out)
}
