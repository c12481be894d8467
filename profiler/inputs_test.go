package profiler

import (
	"testing"

	"github.com/stretchr/testify/require"

	pb "github.com/gpulet/gpuletd/executor/executorpb"
)

// A dynamic dimension is measured at the size the model's profile shapes
// give it (a text model's sequence length), else at 1; fixed dimensions
// stay as the model declares them.
func TestRequestInputsTakeTheProfileShapes(t *testing.T) {
	specs := []*pb.TensorSpec{
		{Name: "ids", Datatype: "INT64", Shape: []int64{-1}},
		{Name: "image", Datatype: "FP32", Shape: []int64{3, -1, -1}},
	}
	tests := []struct {
		name   string
		shapes map[string][]int64
		want   [][]int64
		err    string
	}{
		{name: "none given", want: [][]int64{{4, 1}, {4, 3, 1, 1}}},
		{name: "given", shapes: map[string][]int64{"ids": {128}, "image": {3, 32, 48}}, want: [][]int64{{4, 128}, {4, 3, 32, 48}}},
		{name: "one given", shapes: map[string][]int64{"ids": {16}}, want: [][]int64{{4, 16}, {4, 3, 1, 1}}},
		{name: "does not fit", shapes: map[string][]int64{"image": {32, 48}}, err: `build input "image": the shape to profile at, [32 48], does not fit its dims [3 -1 -1]: 2 dims given where the input has 3 (leave the batch dimension out)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := requestInputs(specs, tt.shapes, 4, true, 1)
			if tt.err != "" {
				require.EqualError(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			require.Len(t, got, 2)
			for i, in := range got {
				require.Equal(t, tt.want[i], in.Shape, in.Name)
			}
			require.Len(t, got[0].Data, 4*int(tt.want[0][1])*8, "INT64 ids")
		})
	}
}

// A measured run's message says at which shapes its inputs were measured,
// so that a model whose profile shapes change is measured again.
func TestRunShapes(t *testing.T) {
	r := &runner{job: Job{Model: Model{Shapes: map[string][]int64{"mask": {128}, "ids": {128}}}}}
	msg := r.sourceNote() + "; 10 points, 0 co-locations"
	require.Equal(t, "source: measured with executors (policy "+BatchPolicy+", engine time per batch); inputs at ids:128 mask:128; 10 points, 0 co-locations", msg)
	require.Equal(t, "ids:128 mask:128", RunShapes(msg))
	r.job.Model.Shapes = nil
	require.Empty(t, RunShapes(r.sourceNote()+"; 10 points, 0 co-locations"))
	require.Equal(t, "ids:64", RunShapes(r.sourceNote()+inputsAt(map[string][]int64{"ids": {64}})))
}
