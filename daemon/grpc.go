package daemon

import (
	"context"
	"net"
	"net/http"
	"time"

	"github.com/gpulet/gpuletd/daemon/config"
	"github.com/gpulet/gpuletd/daemon/repository"
	"github.com/gpulet/gpuletd/internal/version"
	"github.com/gpulet/gpuletd/kserve"
	pb "github.com/gpulet/gpuletd/kserve/inferencepb"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/reflection"
	grpcstatus "google.golang.org/grpc/status"
	"google.golang.org/protobuf/protoadapt"
	"google.golang.org/protobuf/types/known/durationpb"
)

// grpcServer serves the Open Inference Protocol over gRPC
// (inference.GRPCInferenceService). After decoding, every call takes the
// REST API's path: the same model lookup, overload share, byte budget,
// checks, routing, executors, counters and metrics.
type grpcServer struct {
	pb.UnimplementedGRPCInferenceServiceServer
	n *node
}

// grpcStreamsPerConnection bounds the calls one gRPC connection may have
// open at once (HTTP/2's SETTINGS_MAX_CONCURRENT_STREAMS; the library's
// default is 2^32 − 1): a client over it waits for one to end, as gRPC
// clients queue their calls, so that one connection cannot open streams by
// the hundred thousand, each a goroutine until limits.body_timeout.
const grpcStreamsPerConnection = 1024

// newGRPCServer builds the gRPC server with the daemon's limits: at most
// grpcStreamsPerConnection calls at once on a connection, messages up to
// limits.max_request_body, received within limits.body_timeout, idle
// connections closed after limits.idle_timeout, the repository's mutating
// calls guarded as the REST ones are, and TLS with the listeners'
// certificate when it is on.
func (n *node) newGRPCServer(cfg config.Config) *grpc.Server {
	receive := newGRPCReceiveDeadline(n)
	opts := []grpc.ServerOption{
		grpc.MaxConcurrentStreams(grpcStreamsPerConnection),
		grpc.MaxRecvMsgSize(int(cfg.Limits.MaxRequestBody)),
		grpc.MaxSendMsgSize(int(cfg.Limits.MaxRequestBody)),
		grpc.ForceServerCodecV2(newGRPCCodec(n.grpcAnswers)),
		grpc.KeepaliveParams(keepalive.ServerParameters{MaxConnectionIdle: cfg.Limits.IdleTimeout.D()}),
		grpc.ConnectionTimeout(min(10*time.Second, cfg.Limits.BodyTimeout.D())),
		grpc.InTapHandle(receive.receiveTap),
		grpc.ChainUnaryInterceptor(n.grpcOverCap, receive.received, grpcAccessLog(n.accessLogger()), n.grpcGuard),
		grpc.ChainStreamInterceptor(n.grpcStreamOverCap, grpcStreamAccessLog(n.accessLogger()), n.grpcStreamRestricted),
	}
	if n.tls != nil {
		opts = append(opts, grpc.Creds(credentials.NewTLS(n.tls.config())))
	}
	s := grpc.NewServer(opts...)
	pb.RegisterGRPCInferenceServiceServer(s, &grpcServer{n: n})
	healthpb.RegisterHealthServer(s, &grpcHealth{n: n})
	reflection.Register(s)
	return s
}

// listenGRPC opens the gRPC listener under the HTTP listener's connection
// cap; nil when grpc_listen is empty.
func (n *node) listenGRPC(cfg config.Config) (net.Listener, error) {
	if cfg.GRPCListen == "" {
		return nil, nil
	}
	tcp, err := net.Listen("tcp", cfg.GRPCListen)
	if err != nil {
		return nil, err
	}
	return n.grpcAnswers.listener(n.conns.Beside(tcp)), nil
}

// grpcGuard asks a call of a group auth.restricted_apis restricts for
// the group's metadata (grpcRestriction), then the repository's load and
// unload calls, the shared-memory registrations (system and CUDA) and the
// log and trace settings for the admin token when the gRPC listener is not
// loopback, as their REST twins are asked (metadata "authorization: Bearer
// <auth.admin_token>"; TestMutatingGRPCCallsNeedTheToken), unless the
// call carries its restricted group's key. One interceptor for both: each
// in the chain costs every call an allocation.
func (n *node) grpcGuard(ctx context.Context, req any, info *grpc.UnaryServerInfo, next grpc.UnaryHandler) (any, error) {
	keyed, err := n.grpcRestriction(ctx, info.FullMethod)
	if err != nil {
		return nil, err
	}
	if keyed {
		return next(ctx, req)
	}
	switch info.FullMethod {
	case pb.GRPCInferenceService_RepositoryModelLoad_FullMethodName, pb.GRPCInferenceService_RepositoryModelUnload_FullMethodName,
		pb.GRPCInferenceService_SystemSharedMemoryRegister_FullMethodName, pb.GRPCInferenceService_SystemSharedMemoryUnregister_FullMethodName,
		pb.GRPCInferenceService_CudaSharedMemoryRegister_FullMethodName, pb.GRPCInferenceService_CudaSharedMemoryUnregister_FullMethodName,
		pb.GRPCInferenceService_LogSettings_FullMethodName, pb.GRPCInferenceService_TraceSetting_FullMethodName:
	default:
		return next(ctx, req)
	}
	cfg := n.conf()
	if config.IsLoopbackAddr(cfg.GRPCListen) {
		return next(ctx, req)
	}
	md, _ := metadata.FromIncomingContext(ctx)
	var got string
	for _, v := range md.Get("authorization") {
		if t := bearer(v); t != "" {
			got = t
		}
	}
	if err := authRefusal(cfg.Auth.AdminToken, got); err != nil {
		return nil, grpcstatus.Error(codes.Unauthenticated, err.Error())
	}
	return next(ctx, req)
}

// grpcError maps an answer the REST API would give with an HTTP code to the
// gRPC status clients expect. Refusals that a retry may cure (retryable)
// carry RetryInfo (REST's Retry-After).
func grpcError(e *inferError) error {
	var c codes.Code
	switch e.code {
	case http.StatusBadRequest:
		c = codes.InvalidArgument
	case http.StatusNotFound:
		c = codes.NotFound
	case http.StatusRequestEntityTooLarge:
		c = codes.ResourceExhausted
	case http.StatusRequestTimeout:
		c = codes.DeadlineExceeded
	case http.StatusUnauthorized:
		c = codes.Unauthenticated
	case http.StatusConflict:
		c = codes.FailedPrecondition
	case http.StatusServiceUnavailable:
		c = codes.Unavailable
		switch e.reason {
		case reasonOverShare, reasonShedPriority, reasonMemoryBudget, reasonQueueFull:
			c = codes.ResourceExhausted
		}
	default:
		c = codes.Internal
	}
	st := grpcstatus.New(c, e.msg)
	details := []protoadapt.MessageV1{&errdetails.ErrorInfo{Reason: e.reason, Domain: kserve.ErrorDomain}}
	if e.retryable() {
		details = append(details, &errdetails.RetryInfo{RetryDelay: durationpb.New(retryDelay)})
	}
	if d, err := st.WithDetails(details...); err == nil {
		st = d
	}
	return st.Err()
}

// ServerLive answers while the daemon runs.
func (s *grpcServer) ServerLive(context.Context, *pb.ServerLiveRequest) (*pb.ServerLiveResponse, error) {
	return &pb.ServerLiveResponse{Live: true}, nil
}

// ServerReady is REST's /v2/health/ready.
func (s *grpcServer) ServerReady(context.Context, *pb.ServerReadyRequest) (*pb.ServerReadyResponse, error) {
	ready, _, _ := s.n.readiness()
	return &pb.ServerReadyResponse{Ready: ready}, nil
}

// ModelReady is REST's model ready endpoint; a model that cannot be served
// is not ready (its reason is in ModelMetadata's REST twin and the status).
func (s *grpcServer) ModelReady(_ context.Context, r *pb.ModelReadyRequest) (*pb.ModelReadyResponse, error) {
	m, ierr := s.n.lookupModel(r.Name, r.Version)
	if ierr != nil {
		if ierr.code == http.StatusServiceUnavailable {
			return &pb.ModelReadyResponse{Ready: false}, nil
		}
		return nil, grpcError(ierr)
	}
	return &pb.ModelReadyResponse{Ready: s.n.modelReady(m.Name)}, nil
}

// ServerMetadata names the server and its extensions.
func (s *grpcServer) ServerMetadata(context.Context, *pb.ServerMetadataRequest) (*pb.ServerMetadataResponse, error) {
	return &pb.ServerMetadataResponse{Name: "gpuletd", Version: version.Version, Extensions: serverExtensions}, nil
}

// ModelMetadata describes a model as REST's metadata does.
func (s *grpcServer) ModelMetadata(_ context.Context, r *pb.ModelMetadataRequest) (*pb.ModelMetadataResponse, error) {
	m, ierr := s.n.lookupModel(r.Name, r.Version)
	if ierr != nil {
		return nil, grpcError(ierr)
	}
	tensors := func(specs []repository.TensorSpec) []*pb.ModelMetadataResponse_TensorMetadata {
		var out []*pb.ModelMetadataResponse_TensorMetadata
		for _, t := range tensorMetadata(m, specs) {
			out = append(out, &pb.ModelMetadataResponse_TensorMetadata{Name: t.Name, Datatype: t.DataType, Shape: t.Shape})
		}
		return out
	}
	return &pb.ModelMetadataResponse{Name: m.Family, Versions: s.n.versionNames(m.Family), Platform: platformName(m.Platform),
		Inputs: tensors(m.Inputs), Outputs: tensors(m.Outputs)}, nil
}

// ModelStatistics gives the statistics extension's counters, REST's
// /v2/models/stats.
func (s *grpcServer) ModelStatistics(_ context.Context, r *pb.ModelStatisticsRequest) (*pb.ModelStatisticsResponse, error) {
	models := s.n.catalog.all()
	if r.Name != "" {
		m, ierr := s.n.lookupModel(r.Name, r.Version)
		if ierr != nil {
			return nil, grpcError(ierr)
		}
		models = []*repository.Model{m}
	}
	out := &pb.ModelStatisticsResponse{}
	for _, m := range models {
		out.ModelStats = append(out.ModelStats, s.n.statisticsOf(m).Proto())
	}
	return out, nil
}

// noRepositoryName refuses a repository call that names a repository:
// gpuletd serves its repositories as one, and Triton refuses a name too.
func noRepositoryName(name string) error {
	if name == "" {
		return nil
	}
	return grpcError(namedRepositoryRefusal("repository_name", name))
}

// RepositoryIndex lists the repository as REST's index does.
func (s *grpcServer) RepositoryIndex(ctx context.Context, r *pb.RepositoryIndexRequest) (*pb.RepositoryIndexResponse, error) {
	if err := noRepositoryName(r.RepositoryName); err != nil {
		return nil, err
	}
	entries, err := s.n.catalog.indexEntries(ctx)
	if err != nil {
		return nil, grpcstatus.Error(codes.Internal, err.Error())
	}
	out := &pb.RepositoryIndexResponse{}
	for _, e := range entries {
		if r.Ready && e.State != "READY" {
			continue
		}
		out.Models = append(out.Models, &pb.RepositoryIndexResponse_ModelIndex{Name: e.Name, Version: e.Version, State: e.State, Reason: e.Reason})
	}
	return out, nil
}

// RepositoryModelLoad loads or reloads a model and re-plans.
func (s *grpcServer) RepositoryModelLoad(ctx context.Context, r *pb.RepositoryModelLoadRequest) (*pb.RepositoryModelLoadResponse, error) {
	if err := noRepositoryName(r.RepositoryName); err != nil {
		return nil, err
	}
	var lr loadRequest
	for k, v := range r.Parameters {
		if ierr := lr.addParameter(k, v.GetStringParam(), v.GetBytesParam()); ierr != nil {
			return nil, grpcError(ierr)
		}
	}
	if _, ierr := s.n.loadModel(ctx, r.ModelName, lr); ierr != nil {
		return nil, grpcError(ierr)
	}
	return &pb.RepositoryModelLoadResponse{}, nil
}

// LogSettings reads the log settings and, with settings given, changes them
// first (the logging extension).
func (s *grpcServer) LogSettings(_ context.Context, r *pb.LogSettingsRequest) (*pb.LogSettingsResponse, error) {
	changes := make(map[string]any, len(r.Settings))
	for k, v := range r.Settings {
		switch x := v.GetParameterChoice().(type) {
		case *pb.LogSettingsRequest_SettingValue_BoolParam:
			changes[k] = x.BoolParam
		case *pb.LogSettingsRequest_SettingValue_Uint32Param:
			changes[k] = x.Uint32Param
		case *pb.LogSettingsRequest_SettingValue_StringParam:
			changes[k] = x.StringParam
		default:
			return nil, grpcError(badRequest("log setting %q has no value", k))
		}
	}
	now, ierr := s.n.updateLogSettings(changes)
	if ierr != nil {
		return nil, grpcError(ierr)
	}
	res := &pb.LogSettingsResponse{Settings: make(map[string]*pb.LogSettingsResponse_SettingValue, len(now))}
	for k, v := range now {
		sv := &pb.LogSettingsResponse_SettingValue{}
		switch x := v.(type) {
		case bool:
			sv.ParameterChoice = &pb.LogSettingsResponse_SettingValue_BoolParam{BoolParam: x}
		case uint32:
			sv.ParameterChoice = &pb.LogSettingsResponse_SettingValue_Uint32Param{Uint32Param: x}
		case string:
			sv.ParameterChoice = &pb.LogSettingsResponse_SettingValue_StringParam{StringParam: x}
		}
		res.Settings[k] = sv
	}
	return res, nil
}

// RepositoryModelUnload stops serving a model and re-plans.
func (s *grpcServer) RepositoryModelUnload(ctx context.Context, r *pb.RepositoryModelUnloadRequest) (*pb.RepositoryModelUnloadResponse, error) {
	if err := noRepositoryName(r.RepositoryName); err != nil {
		return nil, err
	}
	var dependents bool
	for k, v := range r.Parameters {
		b, ok := v.GetParameterChoice().(*pb.ModelRepositoryParameter_BoolParam)
		if k != paramUnloadDependents || !ok {
			return nil, grpcError(badRequest("unload request: parameter %q is not supported; gpuletd reads %s (a bool_param)", k, paramUnloadDependents))
		}
		dependents = b.BoolParam
	}
	if ierr := s.n.unloadModel(ctx, r.ModelName, dependents); ierr != nil {
		return nil, grpcError(ierr)
	}
	return &pb.RepositoryModelUnloadResponse{}, nil
}

// stopGRPC lets in-flight calls finish until ctx ends, then cuts the rest.
func stopGRPC(ctx context.Context, s *grpc.Server) {
	done := make(chan struct{})
	go func() { defer close(done); s.GracefulStop() }()
	select {
	case <-done:
	case <-ctx.Done():
		s.Stop()
		<-done
	}
}
