package bytefmt

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSize(t *testing.T) {
	for n, want := range map[int64]string{
		0: "0 B", 512: "512 B", 1023: "1023 B", 1024: "1 KiB", 318318: "310.9 KiB", 99 << 10: "99 KiB",
		16 << 20: "16 MiB", 9437184: "9 MiB", 4 << 30: "4 GiB", 3<<30 + 1<<29: "3.5 GiB", 1 << 40: "1 TiB", 3 << 40: "3 TiB",
	} {
		require.Equal(t, want, Size(n), n)
	}
}
