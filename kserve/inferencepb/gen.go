// Package inferencepb is the Open Inference Protocol's gRPC service
// (inference.GRPCInferenceService) as gpuletd serves it: grpc_service.proto
// and the Go code generated from it.
package inferencepb

//go:generate sh -c "protoc --plugin=protoc-gen-go=$(go tool -n protoc-gen-go) --plugin=protoc-gen-go-grpc=$(go tool -n protoc-gen-go-grpc) --go_out=. --go_opt=paths=source_relative --go-grpc_out=. --go-grpc_opt=paths=source_relative -I . -I ../tritonpb grpc_service.proto"
