package daemon

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
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

// REST's forms that name a repository are refused alike, with 400: the
// index at once, the load and unload after the admin token.
func TestRESTRepositoryCallsRefuseARepositoryName(t *testing.T) {
	n := exposedNode(t)
	r := n.routes(nil)
	for _, path := range []string{"/v2/repository/team/index", "/v2/repository/team/models/a/load", "/v2/repository/team/models/a/unload"} {
		req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(`{}`))
		req.RemoteAddr = "127.0.0.1:40000"
		req.Header.Set("Authorization", "Bearer secret")
		w := httptest.NewRecorder()
		r.ServeHTTP(w, req)
		require.Equal(t, http.StatusBadRequest, w.Code, path)
		require.Contains(t, w.Body.String(), `repository \"team\": naming a repository is not supported`, path)
	}
}
