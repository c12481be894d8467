package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/gorilla/mux"
	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"

	pb "github.com/gpulet/gpuletd/kserve/inferencepb"
	"go.uber.org/zap"
)

// maxShmBody bounds a register request's body.
const maxShmBody = 4 << 10

// shmRoutes serves Triton's system shared-memory extension over REST: the
// status of the regions, and (as mutating calls) register and unregister.
func (n *node) shmRoutes(r *mux.Router) {
	r.HandleFunc("/v2/systemsharedmemory/status", n.handleShmStatus).Methods(http.MethodGet)
	r.HandleFunc("/v2/systemsharedmemory/region/{name}/status", n.handleShmStatus).Methods(http.MethodGet)
	r.Handle("/v2/systemsharedmemory/region/{name}/register", n.adminOnly(http.HandlerFunc(n.handleShmRegister))).Methods(http.MethodPost)
	r.Handle("/v2/systemsharedmemory/unregister", n.adminOnly(http.HandlerFunc(n.handleShmUnregister))).Methods(http.MethodPost)
	r.Handle("/v2/systemsharedmemory/region/{name}/unregister", n.adminOnly(http.HandlerFunc(n.handleShmUnregister))).Methods(http.MethodPost)
}

// shmCode is the HTTP status for an error of the registry.
func shmCode(err error) int {
	switch {
	case errors.Is(err, errShmUnknown):
		return http.StatusNotFound
	case errors.Is(err, errShmNotAllowed):
		return http.StatusNotImplemented // as Triton answers with client shared memory off
	}
	return http.StatusBadRequest
}

func (n *node) handleShmStatus(w http.ResponseWriter, r *http.Request) {
	regions, err := n.shm.status(systemRegion, mux.Vars(r)["name"])
	if err != nil {
		writeError(w, shmCode(err), err.Error())
		return
	}
	if regions == nil {
		regions = []shmRegion{}
	}
	writeJSON(w, http.StatusOK, regions)
}

// decodeShmRegister reads a register request's body into req; want shows
// the body it takes, for the error.
func decodeShmRegister(r *http.Request, req any, want string) error {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxShmBody+1))
	if err != nil || len(body) > maxShmBody {
		return fmt.Errorf("register request: unreadable or above %d bytes", maxShmBody)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(req); err != nil {
		return fmt.Errorf("register request: want %s: %w", want, err)
	}
	return nil
}

func (n *node) handleShmRegister(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Key      string `json:"key"`
		Offset   int64  `json:"offset"`
		ByteSize int64  `json:"byte_size"`
	}
	if err := decodeShmRegister(r, &req, `{"key": "/name", "offset": 0, "byte_size": N}`); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	name := mux.Vars(r)["name"]
	if err := n.shm.register(name, req.Key, req.Offset, req.ByteSize); err != nil {
		writeError(w, shmCode(err), "register "+err.Error())
		return
	}
	n.log.Info("shared-memory region registered", zapRegion(name, req.Key, req.Offset, req.ByteSize)...)
	writeJSON(w, http.StatusOK, map[string]any{})
}

func (n *node) handleShmUnregister(w http.ResponseWriter, r *http.Request) {
	if err := n.shm.unregister(systemRegion, mux.Vars(r)["name"]); err != nil {
		writeError(w, shmCode(err), "unregister: "+err.Error())
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{})
}

// SystemSharedMemoryStatus lists the registered regions (one when named).
func (s *grpcServer) SystemSharedMemoryStatus(_ context.Context, r *pb.SystemSharedMemoryStatusRequest) (*pb.SystemSharedMemoryStatusResponse, error) {
	regions, err := s.n.shm.status(systemRegion, r.Name)
	if err != nil {
		return nil, shmGRPCError(err)
	}
	res := &pb.SystemSharedMemoryStatusResponse{Regions: map[string]*pb.SystemSharedMemoryStatusResponse_RegionStatus{}}
	for _, g := range regions {
		res.Regions[g.Name] = &pb.SystemSharedMemoryStatusResponse_RegionStatus{Name: g.Name, Key: g.Key, Offset: uint64(g.Offset), ByteSize: uint64(g.ByteSize)}
	}
	return res, nil
}

// SystemSharedMemoryRegister registers a region.
func (s *grpcServer) SystemSharedMemoryRegister(_ context.Context, r *pb.SystemSharedMemoryRegisterRequest) (*pb.SystemSharedMemoryRegisterResponse, error) {
	const most = 1 << 62 // int64 arithmetic stays exact below
	if r.Offset > most || r.ByteSize > most {
		return nil, grpcstatus.Errorf(codes.InvalidArgument, "register region %q: offset or byte_size out of range", r.Name)
	}
	if err := s.n.shm.register(r.Name, r.Key, int64(r.Offset), int64(r.ByteSize)); err != nil {
		return nil, shmGRPCError(fmt.Errorf("register %w", err))
	}
	s.n.log.Info("shared-memory region registered", zapRegion(r.Name, r.Key, int64(r.Offset), int64(r.ByteSize))...)
	return &pb.SystemSharedMemoryRegisterResponse{}, nil
}

// SystemSharedMemoryUnregister unregisters a region, or all when unnamed.
func (s *grpcServer) SystemSharedMemoryUnregister(_ context.Context, r *pb.SystemSharedMemoryUnregisterRequest) (*pb.SystemSharedMemoryUnregisterResponse, error) {
	if err := s.n.shm.unregister(systemRegion, r.Name); err != nil {
		return nil, shmGRPCError(fmt.Errorf("unregister: %w", err))
	}
	return &pb.SystemSharedMemoryUnregisterResponse{}, nil
}

// zapRegion are a region's log fields.
func zapRegion(name, key string, offset, byteSize int64) []zap.Field {
	return []zap.Field{zap.String("region", name), zap.String("key", key), zap.Int64("offset", offset), zap.Int64("byte_size", byteSize)}
}

// shmGRPCError maps an error of the registry to its gRPC status.
func shmGRPCError(err error) error {
	code := codes.InvalidArgument
	switch {
	case errors.Is(err, errShmUnknown):
		code = codes.NotFound
	case errors.Is(err, errShmExists):
		code = codes.AlreadyExists
	case errors.Is(err, errShmNotAllowed):
		code = codes.Unimplemented // as Triton answers with client shared memory off
	}
	return grpcstatus.Error(code, err.Error())
}
