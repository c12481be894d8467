package migrules

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSameProfile(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"3g.40gb", "3g.40gb", true},
		{"7g.80gb", "7g.79gb", true}, // NVML's memory, rounded, vs the published name
		{"1g.10gb", "1g.20gb", false},
		{"1g.10gb", "1g.10gb+me", false},
		{"3g.40gb", "4g.40gb", false},
		{"7g.80gb", "7g.78gb", false},
		{"3g", "3g.40gb", false}, // a bare count is not a full name
		{"junk", "junk", true},
		{"junk", "3g.40gb", false},
	} {
		require.Equal(t, tc.want, SameProfile(tc.a, tc.b), "%s vs %s", tc.a, tc.b)
		require.Equal(t, tc.want, SameProfile(tc.b, tc.a), "%s vs %s", tc.b, tc.a)
	}
	_, err := ParseName("3g.forty")
	require.ErrorIs(t, err, ErrUnknownProfile)
}

func TestProfileFindsANameNVMLRoundedDifferently(t *testing.T) {
	g, err := Lookup(A100_80GB)
	require.NoError(t, err)
	p, err := g.Profile("7g.79gb")
	require.NoError(t, err)
	require.Equal(t, "7g.80gb", p.Name())
	_, err = g.Profile("7g.70gb")
	require.ErrorIs(t, err, ErrUnknownProfile)
}
