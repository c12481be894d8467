package loadgen

import pb "github.com/gpulet/gpuletd/kserve/inferencepb"

// streamLengths are the requests in each stream, nil without streams.
func streamLengths(streams [][]*Payload) []int {
	if len(streams) == 0 {
		return nil
	}
	out := make([]int, len(streams))
	for i, s := range streams {
		out[i] = len(s)
	}
	return out
}

// useStreams has g send a data file's streams, a stateful model's sequence
// taking the next stream in turn and its requests in order: with the run's
// request parameters, over REST or, when g sends over gRPC, as ModelInfer
// messages. Without streams it does nothing.
func (g *generator) useStreams(streams [][]*Payload, params []Parameter) error {
	if len(streams) == 0 {
		return nil
	}
	g.streams = make([][]*Payload, len(streams))
	for i, s := range streams {
		g.streams[i] = withParams(s, params)
	}
	if g.grpc == nil {
		return nil
	}
	g.grpcStreams = make([][]*pb.ModelInferRequest, len(streams))
	for i, s := range streams {
		for _, p := range s {
			req, err := g.cfg.grpcRequest(p)
			if err != nil {
				return err
			}
			addGRPCParameters(req, params)
			g.grpcStreams[i] = append(g.grpcStreams[i], req)
		}
	}
	return nil
}
