package config

import (
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/gpulet/gpuletd/internal/configerr"
	"gopkg.in/yaml.v3"
)

// Duration is a time.Duration written in YAML as a Go duration string ("20s").
type Duration time.Duration

// D returns the value as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// String formats the duration as Go does ("20s").
func (d Duration) String() string { return time.Duration(d).String() }

// MarshalYAML writes the duration as a string.
func (d Duration) MarshalYAML() (any, error) { return d.String(), nil }

// UnmarshalYAML reads a Go duration string.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return configerr.AtNode(n, errors.New("want a duration such as 20s or 500ms"))
	}
	v, err := time.ParseDuration(n.Value)
	if err != nil {
		return configerr.AtNode(n, fmt.Errorf("%q is not a duration (use a number with a unit: 500ms, 20s, 1m)", n.Value))
	}
	*d = Duration(v)
	return nil
}

// ByteSize is a size in bytes, written in YAML as an integer or with a unit
// ("64MiB", "1GB", "512KiB").
type ByteSize int64

var byteUnits = []struct {
	suffix string
	mult   int64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30},
	{"KB", 1000}, {"MB", 1000 * 1000}, {"GB", 1000 * 1000 * 1000},
	{"B", 1},
}

// ParseByteSize parses "64MiB", "1GB", "1048576" and similar.
func ParseByteSize(s string) (ByteSize, error) {
	s = strings.TrimSpace(s)
	mult := int64(1)
	num := s
	for _, u := range byteUnits {
		if strings.HasSuffix(s, u.suffix) {
			mult, num = u.mult, strings.TrimSpace(strings.TrimSuffix(s, u.suffix))
			break
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 0 || n > (1<<62)/mult {
		return 0, fmt.Errorf("%q is not a size (use bytes or a unit: 512KiB, 64MiB, 1GiB)", s)
	}
	return ByteSize(n * mult), nil
}

// String writes the size with the largest binary unit that divides it.
func (b ByteSize) String() string {
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if b != 0 && int64(b)%u.mult == 0 {
			return fmt.Sprintf("%d%s", int64(b)/u.mult, u.suffix)
		}
	}
	return strconv.FormatInt(int64(b), 10)
}

// MarshalYAML writes the size with a unit.
func (b ByteSize) MarshalYAML() (any, error) { return b.String(), nil }

// UnmarshalYAML reads an integer or a size with a unit.
func (b *ByteSize) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return configerr.AtNode(n, errors.New("want a size such as 64MiB"))
	}
	v, err := ParseByteSize(n.Value)
	if err != nil {
		return configerr.AtNode(n, err)
	}
	*b = v
	return nil
}

// Device kinds in a device list.
const (
	KindCPU      = "cpu"
	KindNvidia   = "nvidia"
	KindEmulated = "emulated"
)

// Device modes: which devices the daemon serves on.
const (
	DevicesAuto   = "auto"   // every NVIDIA GPU NVML finds, else the CPU
	DevicesNvidia = "nvidia" // NVIDIA GPUs only; no GPU is an error
	DevicesCPU    = "cpu"    // the CPU only
	DevicesList   = "list"   // the devices listed
)

// Devices says which devices gpuletd serves on: one of the words auto, nvidia
// or cpu, or a list of device entries (CPU, NVIDIA GPUs by index or UUID,
// emulated GPUs of a reference profile set).
type Devices struct {
	Mode string        // DevicesAuto, DevicesNvidia, DevicesCPU or DevicesList
	List []DeviceEntry // when Mode is DevicesList
}

// DeviceEntry is one element of a device list.
type DeviceEntry struct {
	// Kind is cpu, nvidia or emulated.
	Kind string `yaml:"kind"`
	// GPUs selects NVIDIA GPUs by index or UUID (kind nvidia); empty means all.
	GPUs []string `yaml:"gpus,omitempty"`
	// Profiles names the reference profile set an emulated GPU takes its
	// timing from (kind emulated), e.g. igniter-v100.
	Profiles string `yaml:"profiles,omitempty"`
	// Count is how many emulated GPUs of this set (kind emulated).
	Count int `yaml:"count,omitempty"`
	// MemoryGB is each emulated GPU's memory; 0 takes the set's.
	MemoryGB float64 `yaml:"memory_gb,omitempty"`
	// TimeScale makes each emulated GPU this many times slower than its
	// reference set (every latency of every model multiplied by it), so a
	// host too small to drive the node at the set's full rate can run the
	// same plan at 1/TimeScale of it; 0 is 1 (kind emulated).
	TimeScale float64 `yaml:"time_scale,omitempty"`
}

// MarshalYAML writes a mode word or the list.
func (d Devices) MarshalYAML() (any, error) {
	if d.Mode == DevicesList {
		return d.List, nil
	}
	return d.Mode, nil
}

// UnmarshalYAML reads a mode word or a list of entries; unknown entry fields
// are errors.
func (d *Devices) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		*d = Devices{Mode: n.Value}
		return nil
	case yaml.SequenceNode:
		var list []DeviceEntry
		for _, item := range n.Content {
			var e DeviceEntry
			if err := decodeStrict(item, &e); err != nil {
				return err
			}
			list = append(list, e)
		}
		*d = Devices{Mode: DevicesList, List: list}
		return nil
	default:
		return configerr.AtNode(n, errors.New("want auto, nvidia, cpu or a list of devices"))
	}
}

// decodeStrict decodes a YAML node, refusing fields the target lacks with
// yaml.v3's own error at the key's line in the file (decoding the node again
// from its own text would count lines from the node).
func decodeStrict(n *yaml.Node, out any) error {
	if n.Kind == yaml.MappingNode {
		t := reflect.TypeOf(out).Elem()
		known := sections()[t.Name()].Keys
		var unknown []string
		for i := 0; i+1 < len(n.Content); i += 2 {
			if k := n.Content[i]; known[k.Value] == "" {
				unknown = append(unknown, fmt.Sprintf("line %d: field %s not found in type %s", k.Line, k.Value, t))
			}
		}
		if len(unknown) > 0 {
			return &yaml.TypeError{Errors: unknown}
		}
	}
	return n.Decode(out)
}
