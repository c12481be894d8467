// Package executorpb holds the gRPC protocol between gpuletd serve and its
// executor processes: executor.proto and the Go code generated from it.
package executorpb

//go:generate sh -c "protoc --plugin=protoc-gen-go=$(go tool -n protoc-gen-go) --plugin=protoc-gen-go-grpc=$(go tool -n protoc-gen-go-grpc) --go_out=. --go_opt=paths=source_relative --go-grpc_out=. --go-grpc_opt=paths=source_relative executor.proto"
