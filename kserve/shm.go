package kserve

import (
	"encoding/json"
	"errors"
	"fmt"

	pb "github.com/gpulet/gpuletd/kserve/inferencepb"
)

// The parameters of Triton's shared-memory extension: an input's data, or
// an output's place, is in a registered region instead of the message.
const (
	ParamShmRegion = "shared_memory_region"
	ParamShmSize   = "shared_memory_byte_size"
	ParamShmOffset = "shared_memory_offset"
)

// ShmRef is a tensor's place in a registered shared-memory region.
type ShmRef struct {
	Region       string
	Offset, Size int64
}

// Parameters are the ref as the protocol's parameters carry it back on an
// output placed in shared memory.
func (s *ShmRef) Parameters() map[string]any {
	p := map[string]any{ParamShmRegion: s.Region, ParamShmSize: s.Size}
	if s.Offset != 0 {
		p[ParamShmOffset] = s.Offset
	}
	return p
}

// SharedMemory reads the system shared-memory regions clients registered
// (the daemon holds them); decoding an input placed in one copies it out.
type SharedMemory interface {
	// ReadRegion returns a copy of the size bytes at offset in the region,
	// or an error naming what is wrong (no such region, out of its bounds).
	ReadRegion(region string, offset, size int64) ([]byte, error)
}

// errNoShm refuses a shared-memory parameter where no regions are kept.
var errNoShm = errors.New("names a shared-memory region, but shared memory is not served here")

// shmRef reads the shared-memory parameters of one input or output: found
// is false when there are none. The region and its byte size go together;
// the offset defaults to 0.
func shmRef(region string, hasRegion bool, size int64, hasSize bool, offset int64) (ShmRef, bool, error) {
	switch {
	case !hasRegion && !hasSize:
		return ShmRef{}, false, nil
	case !hasRegion:
		return ShmRef{}, false, fmt.Errorf("has %s without %s", ParamShmSize, ParamShmRegion)
	case !hasSize:
		return ShmRef{}, false, fmt.Errorf("has %s without %s", ParamShmRegion, ParamShmSize)
	case region == "":
		return ShmRef{}, false, fmt.Errorf("%s is empty", ParamShmRegion)
	case size < 0 || offset < 0:
		return ShmRef{}, false, fmt.Errorf("%s %d and %s %d must not be negative", ParamShmSize, size, ParamShmOffset, offset)
	}
	return ShmRef{Region: region, Offset: offset, Size: size}, true, nil
}

// jsonShmRef reads the shared-memory parameters of a REST input or output.
func jsonShmRef(p Parameters) (ShmRef, bool, error) {
	var region string
	raw, hasRegion := p[ParamShmRegion]
	if hasRegion {
		var err error
		if region, err = parseString(raw, ParamShmRegion); err != nil {
			return ShmRef{}, false, err
		}
	}
	size, hasSize, err := intParam(p, ParamShmSize)
	if err != nil {
		return ShmRef{}, false, err
	}
	offset, _, err := intParam(p, ParamShmOffset)
	if err != nil {
		return ShmRef{}, false, err
	}
	return shmRef(region, hasRegion, size, hasSize, offset)
}

// parseString reads a string parameter that is present (apart, as
// parseInt is).
func parseString(raw []byte, key string) (string, error) {
	var v string
	if err := json.Unmarshal(raw, &v); err != nil {
		return "", fmt.Errorf("%s must be a string", key)
	}
	return v, nil
}

// grpcShmRef reads the shared-memory parameters of a gRPC input or output.
func grpcShmRef(p map[string]*pb.InferParameter) (ShmRef, bool, error) {
	var region string
	r, hasRegion := p[ParamShmRegion]
	if hasRegion {
		s, ok := r.GetParameterChoice().(*pb.InferParameter_StringParam)
		if !ok {
			return ShmRef{}, false, fmt.Errorf("%s must be a string", ParamShmRegion)
		}
		region = s.StringParam
	}
	var size, offset int64
	v, hasSize := p[ParamShmSize]
	if hasSize {
		var err error
		if size, err = grpcInt(v); err != nil {
			return ShmRef{}, false, fmt.Errorf("%s must be an integer", ParamShmSize)
		}
	}
	if v, ok := p[ParamShmOffset]; ok {
		var err error
		if offset, err = grpcInt(v); err != nil {
			return ShmRef{}, false, fmt.Errorf("%s must be an integer", ParamShmOffset)
		}
	}
	return shmRef(region, hasRegion, size, hasSize, offset)
}

// readShm copies an input's bytes out of its region, checking them against
// what its shape and data type need (BYTES elements vary: tensor.New counts
// them), and adds them to counted (Request.ShmBytes).
func readShm(shm SharedMemory, ref ShmRef, want int64, counted *int64) ([]byte, error) {
	if shm == nil {
		return nil, errNoShm
	}
	if want >= 0 && ref.Size != want {
		return nil, fmt.Errorf("%s is %d but the shape and data type need %d bytes", ParamShmSize, ref.Size, want)
	}
	data, err := shm.ReadRegion(ref.Region, ref.Offset, ref.Size)
	*counted += int64(len(data))
	return data, err
}
