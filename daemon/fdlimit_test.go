package daemon

import (
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

func TestCapConnections(t *testing.T) {
	tests := []struct {
		name   string
		want   int
		nofile uint64
		got    int
		warned bool
	}{
		{"room enough", 1024, 65536, 1024, false},
		{"held under the file limit", 1024, 1024, 1024 - fdReserve, true},
		{"a tiny file limit still leaves some", 1024, 100, 16, true},
		{"unlimited", 1 << 20, 1 << 62, 1 << 20, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			core, logs := observer.New(zap.WarnLevel)
			require.Equal(t, tc.got, capConnections(tc.want, tc.nofile, zap.New(core)))
			require.Equal(t, tc.warned, logs.Len() == 1)
		})
	}
}
