package daemon

import (
	"context"
	"fmt"
	"net/http"

	"github.com/gorilla/mux"
	"go.uber.org/zap"
	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"

	pb "github.com/gpulet/gpuletd/kserve/inferencepb"
)

// cudaShmRoutes serves Triton's CUDA shared-memory extension over REST, as
// shmRoutes the system one.
func (n *node) cudaShmRoutes(r *mux.Router) {
	r.HandleFunc("/v2/cudasharedmemory/status", n.handleCUDAShmStatus).Methods(http.MethodGet)
	r.HandleFunc("/v2/cudasharedmemory/region/{name}/status", n.handleCUDAShmStatus).Methods(http.MethodGet)
	r.Handle("/v2/cudasharedmemory/region/{name}/register", n.adminOnly(http.HandlerFunc(n.handleCUDAShmRegister))).Methods(http.MethodPost)
	r.Handle("/v2/cudasharedmemory/unregister", n.adminOnly(http.HandlerFunc(n.handleCUDAShmUnregister))).Methods(http.MethodPost)
	r.Handle("/v2/cudasharedmemory/region/{name}/unregister", n.adminOnly(http.HandlerFunc(n.handleCUDAShmUnregister))).Methods(http.MethodPost)
}

// cudaRegionStatus is a CUDA region as the REST status lists it.
type cudaRegionStatus struct {
	Name     string `json:"name"`
	DeviceID int64  `json:"device_id"`
	ByteSize int64  `json:"byte_size"`
}

func (n *node) handleCUDAShmStatus(w http.ResponseWriter, r *http.Request) {
	regions, err := n.shm.status(cudaRegion, mux.Vars(r)["name"])
	if err != nil {
		writeError(w, shmCode(err), err.Error())
		return
	}
	out := make([]cudaRegionStatus, 0, len(regions))
	for _, g := range regions {
		out = append(out, cudaRegionStatus{Name: g.Name, DeviceID: g.DeviceID, ByteSize: g.ByteSize})
	}
	writeJSON(w, http.StatusOK, out)
}

func (n *node) handleCUDAShmRegister(w http.ResponseWriter, r *http.Request) {
	var req struct {
		RawHandle struct {
			B64 []byte `json:"b64"` // base64 in JSON
		} `json:"raw_handle"`
		DeviceID int64 `json:"device_id"`
		ByteSize int64 `json:"byte_size"`
	}
	if err := decodeShmRegister(r, &req, `{"raw_handle": {"b64": "<the CUDA IPC handle in base64>"}, "device_id": 0, "byte_size": N}`); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	name := mux.Vars(r)["name"]
	if err := n.shm.registerCUDA(name, req.DeviceID, req.RawHandle.B64, req.ByteSize); err != nil {
		writeError(w, shmCode(err), "register "+err.Error())
		return
	}
	n.log.Info("CUDA shared-memory region registered", zapCUDARegion(name, req.DeviceID, req.ByteSize)...)
	writeJSON(w, http.StatusOK, map[string]any{})
}

func (n *node) handleCUDAShmUnregister(w http.ResponseWriter, r *http.Request) {
	if err := n.shm.unregister(cudaRegion, mux.Vars(r)["name"]); err != nil {
		writeError(w, shmCode(err), "unregister: "+err.Error())
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{})
}

// CudaSharedMemoryStatus lists the registered CUDA regions (one when named).
func (s *grpcServer) CudaSharedMemoryStatus(_ context.Context, r *pb.CudaSharedMemoryStatusRequest) (*pb.CudaSharedMemoryStatusResponse, error) {
	regions, err := s.n.shm.status(cudaRegion, r.Name)
	if err != nil {
		return nil, shmGRPCError(err)
	}
	res := &pb.CudaSharedMemoryStatusResponse{Regions: map[string]*pb.CudaSharedMemoryStatusResponse_RegionStatus{}}
	for _, g := range regions {
		res.Regions[g.Name] = &pb.CudaSharedMemoryStatusResponse_RegionStatus{Name: g.Name, DeviceId: uint64(g.DeviceID), ByteSize: uint64(g.ByteSize)}
	}
	return res, nil
}

// CudaSharedMemoryRegister registers a CUDA region.
func (s *grpcServer) CudaSharedMemoryRegister(_ context.Context, r *pb.CudaSharedMemoryRegisterRequest) (*pb.CudaSharedMemoryRegisterResponse, error) {
	const most = 1 << 62 // int64 arithmetic stays exact below
	if r.ByteSize > most {
		return nil, grpcstatus.Errorf(codes.InvalidArgument, "register region %q: byte_size out of range", r.Name)
	}
	if err := s.n.shm.registerCUDA(r.Name, r.DeviceId, r.RawHandle, int64(r.ByteSize)); err != nil {
		return nil, shmGRPCError(fmt.Errorf("register %w", err))
	}
	s.n.log.Info("CUDA shared-memory region registered", zapCUDARegion(r.Name, r.DeviceId, int64(r.ByteSize))...)
	return &pb.CudaSharedMemoryRegisterResponse{}, nil
}

// CudaSharedMemoryUnregister unregisters a CUDA region, or all when unnamed.
func (s *grpcServer) CudaSharedMemoryUnregister(_ context.Context, r *pb.CudaSharedMemoryUnregisterRequest) (*pb.CudaSharedMemoryUnregisterResponse, error) {
	if err := s.n.shm.unregister(cudaRegion, r.Name); err != nil {
		return nil, shmGRPCError(fmt.Errorf("unregister: %w", err))
	}
	return &pb.CudaSharedMemoryUnregisterResponse{}, nil
}

// zapCUDARegion are a CUDA region's log fields.
func zapCUDARegion(name string, device, byteSize int64) []zap.Field {
	return []zap.Field{zap.String("region", name), zap.Int64("device_id", device), zap.Int64("byte_size", byteSize)}
}
