package tensor

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseShapes(t *testing.T) {
	got, err := ParseShapes(" ids:128  image:3,224,224 ")
	require.NoError(t, err)
	require.Equal(t, map[string][]int64{"ids": {128}, "image": {3, 224, 224}}, got)
	require.Equal(t, "ids:128 image:3,224,224", FormatShapes(got))
	for _, bad := range []string{"ids", "ids:", ":128", "ids:-1", "ids:1.5", "ids:128 ids:64"} {
		_, err := ParseShapes(bad)
		require.Error(t, err, bad)
	}
	name, dims, err := ParseShape("a:b:4") // a name may hold ':' (an older version's key)
	require.NoError(t, err)
	require.Equal(t, "a:b", name)
	require.Equal(t, []int64{4}, dims)
}
