package cudart

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestKernelFault(t *testing.T) {
	for _, tc := range []struct {
		err  ContextError
		want bool
	}{
		{ContextError{Code: 700, Name: "cudaErrorIllegalAddress"}, true},
		{ContextError{Code: 710, Name: "cudaErrorAssert"}, true},
		{ContextError{Code: 719, Name: "cudaErrorLaunchFailure"}, true},
		{ContextError{Code: 810, Name: "cudaErrorMpsClientTerminated"}, false},
		{ContextError{Code: 214, Name: "cudaErrorECCUncorrectable"}, false},
		{ContextError{Code: 999, Name: "cudaErrorUnknown"}, false},
	} {
		t.Run(tc.err.Name, func(t *testing.T) {
			require.Equal(t, tc.want, tc.err.KernelFault())
		})
	}
}
