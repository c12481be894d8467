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
// connection and no check that the listener answers.
type grpcPool struct {
	mu      sync.Mutex
	conns   map[string]*grpc.ClientConn
	clients map[string]pb.GRPCInferenceServiceClient
}

// grpcClient is a client of the gRPC listener at addr over d's trust and
// headers: over the connection d keeps for addr, dialled (and checked) on
// the first ask. release is to be called when done: it closes a connection
// d does not keep (a daemonAPI made without a pool).
func (d *daemonAPI) grpcClient(ctx context.Context, addr string) (c pb.GRPCInferenceServiceClient, release func(), err error) {
	if d.grpcs == nil {
		conn, c, err := loadgen.DialGRPC(ctx, addr, d.tls, d.header)
		if err != nil {
			return nil, nil, err
		}
		return c, func() { _ = conn.Close() }, nil
	}
	p := d.grpcs
	p.mu.Lock()
	defer p.mu.Unlock()
	if c, ok := p.clients[addr]; ok {
		return c, func() {}, nil
	}
	conn, c, err := loadgen.DialGRPC(ctx, addr, d.tls, d.header)
	if err != nil {
		return nil, nil, err
	}
	if p.conns == nil {
		p.conns, p.clients = map[string]*grpc.ClientConn{}, map[string]pb.GRPCInferenceServiceClient{}
	}
	p.conns[addr], p.clients[addr] = conn, c
	return c, func() {}, nil
}

// closeGRPC closes the gRPC connections d keeps.
func (d *daemonAPI) closeGRPC() {
	if d.grpcs == nil {
		return
	}
	d.grpcs.mu.Lock()
	defer d.grpcs.mu.Unlock()
	for addr, conn := range d.grpcs.conns {
		_ = conn.Close()
		delete(d.grpcs.conns, addr)
		delete(d.grpcs.clients, addr)
	}
}
