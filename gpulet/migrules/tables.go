package migrules

// The tables below are the GPU-instance profiles of NVIDIA's Multi-Instance
// GPU User Guide ("Supported MIG Profiles", the A100 and H100 tables), with the
// placements as `nvidia-smi mig -lgipp` lists them: a GPU has 7 compute slices
// and 8 memory slots; a profile occupies Size memory slots from one of its
// allowed Starts. 7g takes all 8 slots, 3g and 4g take 4, which is why 4g+4g or
// 3g+3g+1g cannot be made even though their compute slices fit.

var (
	starts1g  = []int{0, 1, 2, 3, 4, 5, 6}
	starts1gX = []int{0, 2, 4, 6} // the 1-slice profile with doubled memory
	starts2g  = []int{0, 2, 4}
	starts3g  = []int{0, 4}
	starts4g  = []int{0}
	starts7g  = []int{0}
)

// ampereHopper builds the profile list shared by A100 and H100: the same
// slices, slots and starts; only the memory per profile differs (mem1g is the
// memory of the smallest profile, in GB as the profile names state it).
func ampereHopper(model string, mem1g, mem1gX, mem2g, mem3g, mem4g, mem7g int) GPU {
	return GPU{
		Model:         model,
		ComputeSlices: 7,
		MemorySlots:   8,
		Profiles: []Profile{
			{Slices: 1, MemoryGB: mem1g, Size: 1, Starts: starts1g, Base: true},
			{Slices: 1, MemoryGB: mem1g, Suffix: "+me", Size: 1, Starts: starts1g, MaxCount: 1},
			{Slices: 1, MemoryGB: mem1gX, Size: 2, Starts: starts1gX},
			{Slices: 2, MemoryGB: mem2g, Size: 2, Starts: starts2g, Base: true},
			{Slices: 3, MemoryGB: mem3g, Size: 4, Starts: starts3g, Base: true},
			{Slices: 4, MemoryGB: mem4g, Size: 4, Starts: starts4g, Base: true},
			{Slices: 7, MemoryGB: mem7g, Size: 8, Starts: starts7g, Base: true},
		},
	}
}

// Model names, as Lookup returns them in GPU.Model.
const (
	// A100_40GB is the A100 with 40 GB (SXM4 and PCIe): 1g.5gb … 7g.40gb.
	A100_40GB = "A100-40GB"
	// A100_80GB is the A100 with 80 GB (SXM4 and PCIe): 1g.10gb … 7g.80gb.
	A100_80GB = "A100-80GB"
	// H100_80GB is the H100 with 80 GB (SXM5 and PCIe): 1g.10gb … 7g.80gb.
	H100_80GB = "H100-80GB"
)

// known lists the tables in lookup order. Lookup hands out copies.
var known = []GPU{
	ampereHopper(A100_40GB, 5, 10, 10, 20, 20, 40),
	ampereHopper(A100_80GB, 10, 20, 20, 40, 40, 80),
	ampereHopper(H100_80GB, 10, 20, 20, 40, 40, 80),
}
