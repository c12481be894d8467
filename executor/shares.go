package executor

import (
	"context"
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/gpulet/gpuletd/executor/executorpb"
)

// SetShares sets the plan's share of each named model (sched.SetShare); a
// share is kept for a model loaded later or reloaded.
func (s *Server) SetShares(_ context.Context, req *pb.SetSharesRequest) (*pb.SetSharesResponse, error) {
	for _, sh := range req.Shares {
		if sh.Rate < 0 || (sh.Rate > 0 && sh.Burst < 1) {
			return nil, status.Errorf(codes.InvalidArgument, "share of %s: rate %g req/s with burst %g: use a rate ≥ 0 and, with a rate, a burst ≥ 1", sh.Model, sh.Rate, sh.Burst)
		}
	}
	if err := s.loop.setShares(req.Shares); err != nil {
		return nil, status.Error(codes.Unavailable, err.Error())
	}
	return &pb.SetSharesResponse{}, nil
}

// setShares records shares and applies them to the loaded models.
func (l *loop) setShares(shares []*pb.ModelShare) error {
	var err error
	ok := l.call(func() {
		if l.shares == nil {
			l.shares = map[string]*pb.ModelShare{}
		}
		for _, sh := range shares {
			if sh.Rate == 0 {
				delete(l.shares, sh.Model)
			} else {
				l.shares[sh.Model] = sh
			}
			for _, m := range l.ids {
				if m != nil && m.name == sh.Model {
					if e := l.sc.SetShare(l.now(), m.id, sh.Rate, sh.Burst); e != nil {
						err = fmt.Errorf("set share of %s: %w", sh.Model, e)
					}
				}
			}
		}
	})
	if !ok {
		return errStopping
	}
	return err
}

// SetShares sets the plan's shares of models on the executor's gpu-let.
func (c *Client) SetShares(ctx context.Context, shares []*pb.ModelShare) error {
	_, err := c.rpc.SetShares(ctx, &pb.SetSharesRequest{Shares: shares})
	return err
}

