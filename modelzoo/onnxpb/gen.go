// Package onnxpb holds the Go types generated from onnx.proto, the subset of
// the ONNX model format that modelzoo writes.
package onnxpb

//go:generate sh -c "protoc --plugin=protoc-gen-go=$(go tool -n protoc-gen-go) --go_out=. --go_opt=paths=source_relative onnx.proto"
