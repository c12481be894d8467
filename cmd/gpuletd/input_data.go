package main

import (
	"errors"
	"fmt"
	"os"

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
	"or a file: perf_analyzer's data JSON ({\"data\": [{\"INPUT\": values}, …]}, its requests sent in turn) or one KServe v2 JSON request sent as it is (one model, not with --inputs, --binary or --shm), as perf_analyzer's --input-data"

// inputData is what --input-data asks for: zero data, a request read
// from a file, or perf_analyzer's data file (nil for random or zero).
type inputData struct {
	zero    bool
	payload *loadgen.Payload
	data    *loadgen.InputData
}

// readInputData reads --input-data: random, zero or a file of one KServe
// v2 JSON request, checked as the daemon decodes one.
func readInputData(v string) (inputData, error) {
	switch v {
	case "", inputRandom:
		return inputData{}, nil
	case inputZero:
		return inputData{zero: true}, nil
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

// check refuses a request file with what cannot use it: several models
// (it names one's inputs), several distinct requests, binary tensors or
// shared memory (which the file's JSON does not carry).
func (in inputData) check(models, inputs int, binary, shm bool) error {
	if in.payload == nil && in.data == nil {
		return nil
	}
	switch {
	case models > 1:
		return errors.New("--input-data FILE holds one model's requests; send a mix with random or zero data")
	case inputs > 1:
		return errors.New("--input-data FILE gives the requests; --inputs asks for generated ones")
	case binary || shm:
		return errors.New("--input-data FILE is sent as the JSON it holds, not as binary tensors or through shared memory")
	}
	return nil
}
