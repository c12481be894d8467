package store

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestFileDigests(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	got, err := s.FileDigests(ctx)
	require.NoError(t, err)
	require.Empty(t, got)

	a := FileDigest{Path: "/models/a/1/model.onnx", Platform: "onnxruntime", Entry: []byte(`{"sha256":"aa"}`)}
	b := FileDigest{Path: "/models/b/1/model.pt", Platform: "torchscript", Entry: []byte(`{"sha256":"bb"}`)}
	require.NoError(t, s.PutFileDigest(ctx, b))
	require.NoError(t, s.PutFileDigest(ctx, a))
	a.Entry = []byte(`{"sha256":"a2"}`)
	require.NoError(t, s.PutFileDigest(ctx, a), "a file's new digest replaces its old")
	got, err = s.FileDigests(ctx)
	require.NoError(t, err)
	require.Equal(t, []FileDigest{a, b}, got)

	require.NoError(t, s.DeleteFileDigest(ctx, a.Path, a.Platform))
	require.NoError(t, s.DeleteFileDigest(ctx, a.Path, a.Platform), "none stored is no error")
	got, err = s.FileDigests(ctx)
	require.NoError(t, err)
	require.Equal(t, []FileDigest{b}, got)

	require.ErrorIs(t, s.PutFileDigest(ctx, FileDigest{Entry: []byte("{}")}), ErrInvalid)
	require.ErrorIs(t, s.PutFileDigest(ctx, FileDigest{Path: "/x"}), ErrInvalid)
}
