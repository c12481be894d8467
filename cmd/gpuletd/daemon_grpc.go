package main

import (
	"context"
	"sync"

	pb "github.com/gpulet/gpuletd/kserve/inferencepb"
	"github.com/gpulet/gpuletd/sim/loadgen"
	"google.golang.org/grpc"
)

// grpcPool keeps one connection to each gRPC listener a command asks more
// than once (a load's statistics, read before the run and at every window's
// bounds, from goroutines of their own), so that each ask needs no new
// connection and no check that the listener answers. Its zero value is
// empty and ready.
type grpcPool struct {
	mu      sync.Mutex
	conns   map[string]*grpc.ClientConn
	clients map[string]pb.GRPCInferenceServiceClient
}

// grpcClient is a client of the gRPC listener at addr over d's trust and
// headers, over the connection d keeps for addr, dialled (and checked) on
// the first ask; closeGRPC closes it.
func (d *daemonAPI) grpcClient(ctx context.Context, addr string) (pb.GRPCInferenceServiceClient, error) {
	p := &d.grpcs
	p.mu.Lock()
	defer p.mu.Unlock()
	if c, ok := p.clients[addr]; ok {
		return c, nil
	}
	conn, c, err := loadgen.DialGRPC(ctx, addr, d.tls, d.header)
	if err != nil {
		return nil, err
	}
	if p.conns == nil {
		p.conns, p.clients = map[string]*grpc.ClientConn{}, map[string]pb.GRPCInferenceServiceClient{}
	}
	p.conns[addr], p.clients[addr] = conn, c
	return c, nil
}

// closeGRPC closes the gRPC connections d keeps.
func (d *daemonAPI) closeGRPC() {
	p := &d.grpcs
	p.mu.Lock()
	defer p.mu.Unlock()
	for addr, conn := range p.conns {
		_ = conn.Close()
		delete(p.conns, addr)
		delete(p.clients, addr)
	}
}
