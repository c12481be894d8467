package refset

// Names of the reference sets.
const (
	SetIgniterV100    = "igniter-v100"
	SetSymphonyA100   = "symphony-a100"
	SetSymphony1080Ti = "symphony-1080ti"
	SetShepherdV100   = "shepherd-v100"
	SetH100Measured   = "h100-measured"
	SetParvaGPUA100   = "parvagpu-a100"
	SetLoki1080Ti     = "loki-1080ti"
)

// mpsSizes are the gpu-let sizes of the MPS set: the design's default sizes
// (DESIGN.md §3), all of which iGniter measured (20..80) or which are the
// whole GPU (100).
var mpsSizes = []int{20, 40, 50, 60, 80, 100}

// catalog holds the metadata of every set. Device memory is the GPU
// product's: V100 16 GB (SHEPHERD states p3.2xlarge, one V100 with 16 GB,
// section 7 of seed 002_6e98fe35d66b93e5.txt; iGniter does not state it, 16 GB
// is assumed), GTX 1080 Ti 11 GB, A100 40 GB (Symphony does not say which
// A100; the smaller one is assumed so memory checks err on the safe side).
var catalog = map[string]Meta{
	SetLoki1080Ti: {
		Name:   SetLoki1080Ti,
		GPU:    "NVIDIA GeForce GTX 1080 Ti 11GB",
		Origin: "loki/runtimes-1080ti.csv",
		Citation: "Loki (seed 004_86fc025dfe1323f1.txt; UMass-LIDS/Loki profiling/profiled): median ONNX Runtime batch time " +
			"of YOLOv5 n/s/m/l/x and EfficientNet B0-B6 at batches 1-64 on a whole 1080 Ti",
		Partitioning: PartitionNone,
		Sizes:        []int{100},
		MemoryGiB:    11,
		MaxBatch:     64,
	},
	SetParvaGPUA100: {
		Name:   SetParvaGPUA100,
		GPU:    "NVIDIA A100 80GB",
		Origin: "parvagpu/prof_data",
		Citation: "ParvaGPU (SC'24, MunQ-Lee/ParvaGPU_SC24 prof_data/, commit 5f3de1e, MIT licence): measured throughput " +
			"and batch latency of 11 models on MIG instances of 1, 2, 3, 4 and 7 GPCs with 1 to 5 identical MPS processes inside",
		Partitioning: PartitionMIG,
		// The base MIG profiles of the A100 (1g, 2g, 3g, 4g, 7g), in percent
		// of its 7 compute slices.
		Sizes:     []int{14, 29, 43, 57, 100},
		MemoryGiB: 80,
		// The largest batch one process ran; a segment's batch is up to
		// its processes times this (Build).
		MaxBatch: 256,
	},
	SetH100Measured: {
		Name:   SetH100Measured,
		GPU:    "NVIDIA H100 80GB HBM3",
		Origin: "measured/h100-80gb-2026-11-22.jsonl",
		Citation: "measured by gpuletd on one H100 80GB HBM3 (driver 580.159.04, CUDA 13.0, ONNX Runtime 1.29.0 CUDA provider) " +
			"on 2026-11-22: p50 engine time per batch through real executors under MPS, utilisation from Nsight Compute and NVML GPM, " +
			"self co-locations (scripts/gpu/campaign.sh profile and pairs phases)",
		Partitioning: PartitionMPS,
		// The sizes the campaign profiled.
		Sizes:     []int{10, 20, 30, 40, 50, 60, 80, 100},
		MemoryGiB: 80,
		MaxBatch:  64,
	},
	SetIgniterV100: {
		Name:         SetIgniterV100,
		GPU:          "NVIDIA V100 16GB",
		Origin:       "igniter/v100-mps-profile.jsonl",
		Citation:     "iGniter (icloud-ecnu/igniter, i-Gniter/Profile/tools/gpulet.config): measured TensorRT latency, L2 and DRAM utilisation under MPS, 750 co-locations",
		Partitioning: PartitionMPS,
		Sizes:        mpsSizes,
		MemoryGiB:    16,
		MaxBatch:     32,
	},
	SetSymphonyA100: {
		Name:         SetSymphonyA100,
		GPU:          "NVIDIA A100 40GB",
		Origin:       "papers/symphony-a100.csv",
		Citation:     "Symphony (seed 000_e60bd189cb361670.txt), Table 4: alpha, beta and SLO on a whole A100",
		Partitioning: PartitionNone,
		Sizes:        []int{100},
		MemoryGiB:    40,
		MaxBatch:     32,
	},
	SetSymphony1080Ti: {
		Name:         SetSymphony1080Ti,
		GPU:          "NVIDIA GeForce GTX 1080 Ti 11GB",
		Origin:       "papers/symphony-1080ti.csv",
		Citation:     "Symphony (seed 000_e60bd189cb361670.txt), Table 3: alpha, beta and SLO on a whole 1080 Ti",
		Partitioning: PartitionNone,
		Sizes:        []int{100},
		MemoryGiB:    11,
		MaxBatch:     32,
	},
	SetShepherdV100: {
		Name:         SetShepherdV100,
		GPU:          "NVIDIA V100 16GB",
		Origin:       "papers/shepherd-v100.csv",
		Citation:     "SHEPHERD (seed 002_6e98fe35d66b93e5.txt), Table 4: alpha and beta on a whole V100 (p3.2xlarge)",
		Partitioning: PartitionNone,
		Sizes:        []int{100},
		MemoryGiB:    16,
		MaxBatch:     32,
	},
}

// expectedModels is how many models each source table has; a shorter table
// is reported as truncated.
var expectedModels = map[string]int{
	SetParvaGPUA100:   11,
	SetLoki1080Ti:     12,
	SetH100Measured:   7,
	SetIgniterV100:    4,
	SetSymphonyA100:   37,
	SetSymphony1080Ti: 35,
	SetShepherdV100:   17,
}
