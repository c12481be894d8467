// Package container says whether gpuletd runs inside a container, so that
// the fixes it suggests for a missing GPU, driver program or CUDA library
// name what a container needs (the GPUs passed in, the image built for GPUs)
// rather than what a host needs (a driver or a package installed).
package container

import (
	"os"
	"sync"
)

// Detect reports whether this process runs in a container: the environment
// variable container is set (gpuletd's image sets it, as systemd's
// container managers and podman do), or podman's /run/.containerenv exists.
// Docker's /.dockerenv is not taken as a sign: it outlives the container in
// a root file system exported from one (virtual machines booted from such an
// image have it). Read once.
var Detect = sync.OnceValue(func() bool {
	return detect(os.Getenv, func(path string) bool {
		_, err := os.Stat(path)
		return err == nil
	})
})

// detect is Detect with the environment and the file system given.
func detect(getenv func(string) string, exists func(path string) bool) bool {
	return getenv("container") != "" || exists("/run/.containerenv")
}

// GPUs is how to pass an NVIDIA host's GPUs into a container: the fix for a
// driver, its libraries or its programs (the MPS control program) not found
// inside one.
const GPUs = "pass the GPUs in with the NVIDIA Container Toolkit on the host, which mounts the driver's libraries and programs: docker run --gpus all (podman: --device nvidia.com/gpu=all), with NVIDIA_DRIVER_CAPABILITIES holding compute and utility (gpuletd's image sets both)"

// GPUImage is the fix for ONNX Runtime's GPU providers missing inside a
// container: the image without them is the CPU one.
const GPUImage = "run the image built for GPUs (make image-gpu: gpuletd:VERSION-cuda), which holds ONNX Runtime's CUDA and TensorRT providers on NVIDIA's CUDA 13 runtime with cuDNN 9"

// MPSControl is the fix for the MPS control program missing inside a
// container.
const MPSControl = "pass the GPUs in (docker run --gpus all, with the NVIDIA Container Toolkit on the host): the toolkit mounts nvidia-cuda-mps-control with the compute capability, which gpuletd's image asks for"

// TensorRT is the fix for TensorRT's libraries missing inside a container.
const TensorRT = "use provider cuda (the default): the image built for GPUs has no TensorRT; or build on a base image that has TensorRT 10 for CUDA 13 (BASE=… make image-gpu)"

// CUDABase is the fix for the CUDA runtime or cuDNN missing inside a
// container: the CPU image, or a GPU image built on a base without them.
const CUDABase = "this image's base has no CUDA 13 runtime or cuDNN 9: run the image make image-gpu builds on NVIDIA's CUDA 13 runtime with cuDNN 9 (gpuletd:VERSION-cuda), or build it on a base image that has them (BASE=… make image-gpu)"
