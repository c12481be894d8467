package refset

import (
	"fmt"
	"io"

	"github.com/gpulet/gpuletd/interference"
)

// BenchInterference is `gpuletd bench interference --data FILE`: it parses
// an iGniter profile (ParseIgniter), builds its samples and runs
// interference.Bench with the seed.
func BenchInterference(r io.Reader, seed uint64) (interference.BenchReport, error) {
	src, err := ParseIgniter(r)
	if err != nil {
		return interference.BenchReport{}, err
	}
	set, err := Build(src)
	if err != nil {
		return interference.BenchReport{}, err
	}
	return BenchInterferenceSet(set, seed)
}

// BenchInterferenceSet runs interference.Bench on a set's measured pairs
// (the embedded igniter-v100 set when the CLI is given no file).
func BenchInterferenceSet(set *Set, seed uint64) (interference.BenchReport, error) {
	samples, err := set.InterferenceSamples()
	if err != nil {
		return interference.BenchReport{}, err
	}
	if len(samples) == 0 {
		return interference.BenchReport{}, fmt.Errorf("bench interference on %s: %w", set.Name, ErrNoInterference)
	}
	return interference.Bench(samples, seed)
}
