package daemon

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"

	"github.com/gpulet/gpuletd/daemon/repository"
	"github.com/gpulet/gpuletd/executor/engine"
	"github.com/gpulet/gpuletd/gpulet"
	"github.com/gpulet/gpuletd/interference"
	"github.com/gpulet/gpuletd/mps"
	"github.com/gpulet/gpuletd/profiler/refset"
	"github.com/gpulet/gpuletd/profiler/store"
)

// errNoProfile marks a model that has no latency profile on a device type.
var errNoProfile = errors.New("no latency profile")

// profileBook finds each model's L(b,p) on each device type: reference sets
// for emulated devices (through the model's profile name), the store for
// measured ones. It also holds the emulated physics and the interference
// models per device type.
type profileBook struct {
	st *store.Store

	mu      sync.Mutex
	sets    map[string]*refset.Set
	physics map[string]*refset.Physics
	intf    map[string]*interference.Model
	// loans are the files planned with another file's profile
	// (profile_borrow.go), by sha256.
	loans map[string]profileLoan
}

func newProfileBook(st *store.Store) *profileBook {
	return &profileBook{st: st, sets: map[string]*refset.Set{}, physics: map[string]*refset.Physics{}, intf: map[string]*interference.Model{}, loans: map[string]profileLoan{}}
}

func (b *profileBook) set(name string) (*refset.Set, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if s, ok := b.sets[name]; ok {
		return s, nil
	}
	s, err := refset.Load(name)
	if err != nil {
		return nil, err
	}
	b.sets[name] = s
	return s, nil
}

// physicsOf returns the emulated physics of a reference set (nil for sets
// without co-location data).
func (b *profileBook) physicsOf(name string) (*refset.Physics, error) {
	s, err := b.set(name)
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if ph, ok := b.physics[name]; ok {
		return ph, nil
	}
	ph, err := refset.NewPhysics(s, nil)
	if err != nil {
		return nil, err
	}
	b.physics[name] = ph
	return ph, nil
}

// profile returns model m's profile on device d, renamed to the model.
func (b *profileBook) profile(ctx context.Context, m *repository.Model, d mps.Device) (*gpulet.Profile, error) {
	p, _, err := b.profileAndMemory(ctx, m, d)
	return p, err
}

// profileAndMemory is profile, and where the profile's memory comes from
// (memorySource*).
func (b *profileBook) profileAndMemory(ctx context.Context, m *repository.Model, d mps.Device) (*gpulet.Profile, string, error) {
	var src *gpulet.Profile
	switch d.Kind {
	case mps.KindEmulated:
		s, err := b.set(d.Emulated)
		if err != nil {
			return nil, "", err
		}
		rm, ok := s.Model(m.Profile())
		if !ok {
			return nil, "", fmt.Errorf("%w: %s names profile %q, which set %s does not have (it has %v)", errNoProfile, m.Name, m.Profile(), s.Name, s.ModelNames())
		}
		src = rm.Profile
	default:
		if m.Platform == repository.PlatformTorchScript {
			return nil, "", fmt.Errorf("%s on %s: %w", m.Name, d.Type, repository.ErrEmulatedOnly)
		}
		pts, borrowed, err := b.storedLatency(ctx, m.SHA256, d.Type)
		if errors.Is(err, store.ErrNotFound) {
			return nil, "", fmt.Errorf("%w: %s on %s (run: %s)", errNoProfile, m.Name, d.Type, measureCommand(m, d))
		}
		if err != nil {
			return nil, "", err
		}
		var gp []gpulet.Point
		for _, p := range pts {
			if !p.Complete {
				continue
			}
			p99 := p.P99MS
			if math.IsNaN(p99) {
				p99 = 0
			}
			gp = append(gp, gpulet.Point{Batch: p.Batch, Size: p.Size, P50MS: p.P50MS, P99MS: p99, Util: gpulet.UnknownUtil()})
		}
		if len(gp) == 0 {
			return nil, "", fmt.Errorf("%w: %s on %s has only incomplete points", errNoProfile, m.Name, d.Type)
		}
		mem, from, err := b.memoryMB(ctx, m, d, borrowed)
		if err != nil {
			return nil, "", err
		}
		p, err := gpulet.NewProfile(m.Name, d.Type, mem, gp)
		return p, from, err
	}
	mem, from := m.Config.MemoryMB, memorySourceConfig
	if mem == 0 {
		mem, from = src.MemoryMB, memorySourceRefSet
	}
	p, err := gpulet.NewProfile(m.Name, d.Type, mem, scaledPoints(src.Points(), d.LatencyScale()))
	return p, from, err
}

// scaledPoints multiplies every latency by scale (an emulated device's
// LatencyScale).
func scaledPoints(pts []gpulet.Point, scale float64) []gpulet.Point {
	if scale == 1 {
		return pts
	}
	out := make([]gpulet.Point, len(pts))
	for i, p := range pts {
		p.P50MS *= scale
		p.P99MS *= scale
		out[i] = p
	}
	return out
}

// memoryMB is the memory one loaded copy of m needs on the measured device
// d, for the planner: the model's memory_mb when its configuration sets it;
// on the CPU, the host memory its profile run measured (an executor's peak
// resident memory with the model alone, less what the executor held before
// the load, which the CPU's bound leaves out once per executor:
// readCPUBound; the file's it borrows a profile from while it has none of
// its own); else estimateMemoryMB, which a model profiled before memory was
// measured also gets on the CPU.
//
// The source says which, for an operator: memorySource*.
func (b *profileBook) memoryMB(ctx context.Context, m *repository.Model, d mps.Device, borrowed bool) (mb float64, source string, err error) {
	if m.Config.MemoryMB > 0 {
		return m.Config.MemoryMB, memorySourceConfig, nil
	}
	if d.Kind == mps.KindCPU {
		sha := m.SHA256
		if l, ok := b.loanOf(sha); ok && borrowed {
			sha = l.From
		}
		got, err := b.st.ModelMemory(ctx, sha, d.Type)
		switch {
		case err == nil:
			return got.OwnMB(), memorySourceMeasured, nil
		case !errors.Is(err, store.ErrNotFound):
			return 0, "", fmt.Errorf("read the memory of %s on %s: %w", m.Name, d.Type, err)
		}
	}
	return estimateMemoryMB(m.Bytes, sessionsOn(d, m.Config.MaxBatchSize)), memorySourceEstimate, nil
}

// Where a model's memory on a device type comes from (profileDoc).
const (
	memorySourceConfig   = "config"    // memory_mb in its configuration
	memorySourceMeasured = "measured"  // its profile run's peak resident memory, less its executor's own (CPU)
	memorySourceEstimate = "estimated" // from its file's size (estimateMemoryMB)
	memorySourceRefSet   = "reference set"
)

// estimateMemoryMB guesses a model's device memory from its file: the
// weights once per engine session and once more for the runtime's working
// copies, plus a fixed 256 MB for the runtime and activations.
func estimateMemoryMB(fileBytes int64, sessions int) float64 {
	return float64(1+sessions)*float64(fileBytes)/(1<<20) + 256
}

// sessionsOn is how many engine sessions a model whose largest batch is
// maxBatch runs on device d: one per padded batch size on an NVIDIA GPU
// (engine.ORTOptions.FixedShapes), else one.
func sessionsOn(d mps.Device, maxBatch int) int {
	if d.Kind != mps.KindNVIDIA || maxBatch <= 1 {
		return 1
	}
	return len(engine.PaddedSizes(maxBatch))
}

// interferenceModel returns the interference model of a device type: for a
// reference set, one trained on its measured pairs; nil when there is none.
func (b *profileBook) interferenceModel(d mps.Device) (*interference.Model, error) {
	key := d.Type
	b.mu.Lock()
	if m, ok := b.intf[key]; ok {
		b.mu.Unlock()
		return m, nil
	}
	b.mu.Unlock()
	var model *interference.Model
	if d.Kind == mps.KindEmulated {
		s, err := b.set(d.Emulated)
		if err != nil {
			return nil, err
		}
		if len(s.Pairs) > 0 {
			samples, err := s.InterferenceSamples()
			if err != nil {
				return nil, err
			}
			if model, _, err = interference.Train(samples, interference.Candidates(), interference.DefaultSeed); err != nil {
				return nil, err
			}
		}
	}
	b.mu.Lock()
	b.intf[key] = model
	b.mu.Unlock()
	return model, nil
}
