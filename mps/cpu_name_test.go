package mps

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestTidyCPUName(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"Intel(R) Xeon(R) Gold 6248 CPU @ 2.50GHz", "Intel Xeon Gold 6248"},
		{"Intel(R) Xeon(R) Platinum 8480C", "Intel Xeon Platinum 8480C"},
		{"Intel(R) Core(TM) i7-8700K CPU @ 3.70GHz", "Intel Core i7-8700K"},
		{"AMD EPYC 7763 64-Core Processor", "AMD EPYC 7763 64-Core"},
		{" AMD EPYC", "AMD EPYC"},
		{"Neoverse-V2", "Neoverse-V2"},
		{"CPU", "CPU"},
		{"", ""},
	} {
		require.Equal(t, tc.want, tidyCPUName(tc.in), tc.in)
	}
}
