// Package tritonpb holds the Go types generated from model_config.proto, the
// part of Triton's model configuration (config.pbtxt, protobuf text format)
// that gpuletd reads from a model repository and answers with over gRPC
// (ModelConfig).
package tritonpb

//go:generate sh -c "protoc --plugin=protoc-gen-go=$(go tool -n protoc-gen-go) --go_out=. --go_opt=paths=source_relative model_config.proto"
