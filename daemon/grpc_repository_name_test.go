package daemon

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"

	pb "github.com/gpulet/gpuletd/kserve/inferencepb"
)

// A repository call that names a repository is refused, as Triton refuses
// it: gpuletd serves its repositories as one. (Before, any name stood for
// the one repository.)
func TestGRPCRepositoryCallsRefuseARepositoryName(t *testing.T) {
	s := &grpcServer{n: &node{}} // refused before the node is asked anything
	ctx := context.Background()
	_, ierr := s.RepositoryIndex(ctx, &pb.RepositoryIndexRequest{RepositoryName: "models"})
	_, lerr := s.RepositoryModelLoad(ctx, &pb.RepositoryModelLoadRequest{RepositoryName: "models", ModelName: "m"})
	_, uerr := s.RepositoryModelUnload(ctx, &pb.RepositoryModelUnloadRequest{RepositoryName: "models", ModelName: "m"})
	for _, err := range []error{ierr, lerr, uerr} {
		require.Equal(t, codes.InvalidArgument, grpcstatus.Code(err), "%v", err)
		require.Contains(t, grpcstatus.Convert(err).Message(), `repository_name "models": naming a repository is not supported`)
	}
}
