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

// FuzzParseShapes: whatever it reads, ParseShapes reads back from
// FormatShapes' writing of it, so a profile_shapes written out (a ModelConfig
// answer, a profile run's message) means what was read.
func FuzzParseShapes(f *testing.F) {
	for _, s := range []string{"input_ids:128 attention_mask:128", "image:3,512,512", "a:b:1", "x:0", "x:1 x:2", ":1", "x:", "x:1,,2", "x: 1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		shapes, err := ParseShapes(s)
		if err != nil {
			return
		}
		back, err := ParseShapes(FormatShapes(shapes))
		require.NoError(t, err, "%q written as %q", s, FormatShapes(shapes))
		require.Equal(t, shapes, back)
	})
}
