package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/gpulet/gpuletd/kserve"
	"github.com/gpulet/gpuletd/sim/loadgen"
)

// Values of --input-data, as perf_analyzer's.
const (
	inputRandom = "random"
	inputZero   = "zero"
)

// inputDataUsage is --input-data's help in gpuletd load.
const inputDataUsage = "the requests' data: random (in [0,1) for floats, [0,10) for integers), zero (zeros: integer inputs that index a table, token ids or types, stay in its first row), " +
	"or a file: perf_analyzer's data JSON ({\"data\": [{\"INPUT\": values}, …]}, its requests sent in turn; for a stateful model streams, [[{…}, …], …], a sequence each) or one KServe v2 JSON request sent as it is (one model, not with --inputs, --binary or --shm), " +
	"or perf_analyzer's folder of a file for each input, named after it (one request's bytes as they lie in memory; a BYTES input's elements a line each), sent as binary tensors, as perf_analyzer's --input-data; " +
	"several data files, --input-data given for each, send their requests in turn"

// inputData is what --input-data asks for: zero data, a request read
// from a file, or perf_analyzer's data file (nil for random or zero).
type inputData struct {
	zero    bool
	payload *loadgen.Payload
	data    *loadgen.InputData
}

// readInputData reads --input-data: random, zero, a file of one KServe
// v2 JSON request, checked as the daemon decodes one, perf_analyzer's data
// file, or its folder of a file for each input.
func readInputData(v string) (inputData, error) {
	switch v {
	case "", inputRandom:
		return inputData{}, nil
	case inputZero:
		return inputData{zero: true}, nil
	}
	if fi, err := os.Stat(v); err == nil && fi.IsDir() {
		d, err := loadgen.ReadInputDir(v)
		if err != nil {
			return inputData{}, fmt.Errorf("--input-data %s: %w", v, err)
		}
		return inputData{data: d}, nil
	}
	body, err := os.ReadFile(v)
	if err != nil {
		return inputData{}, fmt.Errorf("--input-data: give random, zero or a request file: %w", err)
	}
	if loadgen.IsInputData(body) {
		d, err := loadgen.ParseInputData(body)
		if err != nil {
			return inputData{}, fmt.Errorf("--input-data %s: %w", v, err)
		}
		return inputData{data: d}, nil
	}
	if _, err := kserve.DecodeRequest(body, -1); err != nil {
		return inputData{}, fmt.Errorf("--input-data %s: not a KServe v2 JSON request: %w", v, err)
	}
	return inputData{payload: &loadgen.Payload{Body: body, JSONLen: -1}}, nil
}

// readInputDataFiles reads gpuletd load's --input-data, given once or, as
// perf_analyzer takes it, several times: each a perf_analyzer data file,
// their requests sent in turn, the first file's first.
func readInputDataFiles(vs []string) (inputData, error) {
	if len(vs) <= 1 {
		return readInputData(strings.Join(vs, ""))
	}
	var all *loadgen.InputData
	for _, v := range vs {
		in, err := readInputData(v)
		if err != nil {
			return inputData{}, err
		}
		if in.data == nil || in.data.IsDir() {
			return inputData{}, fmt.Errorf("--input-data given %d times: each must be a perf_analyzer data file ({\"data\": [...]}), whose requests go in turn, and %s is not", len(vs), v)
		}
		if all == nil {
			all = in.data
		} else if err := all.Append(in.data); err != nil {
			return inputData{}, fmt.Errorf("--input-data %s: %w", v, err)
		}
	}
	return inputData{data: all}, nil
}

// check refuses a request file with what cannot use it: several models
// (it names one's inputs), several distinct requests, binary tensors or
// shared memory for a KServe request (which its JSON does not carry), or
// --binary for a data file (whose entries say how each input goes).
func (in inputData) check(models, inputs int, binary, shm bool) error {
	if in.payload == nil && in.data == nil {
		return nil
	}
	switch {
	case models > 1:
		return errors.New("--input-data FILE holds one model's requests; send a mix with random or zero data")
	case inputs > 1:
		return errors.New("--input-data FILE gives the requests; --inputs asks for generated ones")
	case in.payload != nil && (binary || shm):
		return errors.New("--input-data FILE is sent as the JSON it holds, not as binary tensors or through shared memory")
	case binary && !in.data.IsDir():
		return errors.New("--input-data FILE sends its values as JSON and its base64 as binary tensors, as perf_analyzer does: leave out --binary")
	}
	return nil
}
