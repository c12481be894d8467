// Package executor is the per-gpu-let executor process: the scheduling core and
// its policies, the routing policy, tensor batching, the engines, and the gRPC
// service with its client. It knows nothing of HTTP.
package executor
