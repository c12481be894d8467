package cudart

// kernelFaults are the CUDA runtime's error codes (facts of its API) that
// a kernel of the process's own work raises and its context then holds for
// good.
var kernelFaults = map[int]bool{
	700: true, // cudaErrorIllegalAddress
	710: true, // cudaErrorAssert: a kernel's failed assert
	714: true, // cudaErrorHardwareStackError
	715: true, // cudaErrorIllegalInstruction
	716: true, // cudaErrorMisalignedAddress
	717: true, // cudaErrorInvalidAddressSpace
	718: true, // cudaErrorInvalidPc
	719: true, // cudaErrorLaunchFailure
}

// KernelFault says whether the CUDA error code is one a kernel of the
// process's own work raises (an illegal address, as an index past a table's
// end makes; a failed assert), which the inputs of the run that found it
// may be the cause of, rather than the device's own (an uncorrectable ECC
// error) or another process's (a client the MPS server dropped).
func KernelFault(code int) bool { return kernelFaults[code] }

// KernelFault says so of e's code.
func (e *ContextError) KernelFault() bool { return KernelFault(e.Code) }
