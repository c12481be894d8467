package refset

import (
	"testing"

	"github.com/gpulet/gpuletd/interference"
)

func BenchmarkLoad(b *testing.B) {
	for _, name := range Names() {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if _, err := Load(name); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkNewPhysics includes training the interference model (selection
// over every candidate, both splits) on the 1,500 iGniter samples.
func BenchmarkNewPhysics(b *testing.B) {
	set, err := Load(SetIgniterV100)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := NewPhysics(set, nil); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCoLocated(b *testing.B) {
	set, err := Load(SetIgniterV100)
	if err != nil {
		b.Fatal(err)
	}
	ph, err := NewPhysics(set, nil)
	if err != nil {
		b.Fatal(err)
	}
	cases := map[string][2]Placement{
		"measured":  {{"alexnet", 2, 20}, {"resnet50", 2, 80}},
		"predicted": {{"alexnet", 3, 40}, {"vgg19", 5, 60}},
	}
	for name, c := range cases {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if _, err := ph.CoLocated(c[0], c[1]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkBenchInterference is the work behind `gpuletd bench
// interference` on the embedded iGniter set.
func BenchmarkBenchInterference(b *testing.B) {
	set, err := Load(SetIgniterV100)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := BenchInterferenceSet(set, interference.DefaultSeed); err != nil {
			b.Fatal(err)
		}
	}
}
