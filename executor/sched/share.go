package sched

import (
	"fmt"
	"time"
)

// Shares on a shared gpu-let.
//
// The plan gives each model on a gpu-let it shares a rate, and checks that
// the duty cycle of those rates meets every model's SLO. The policies order
// batches by urgency alone, so a model whose requests come far faster than
// its rate (a flood) always has the most urgent heads, its oldest requests,
// and takes the whole gpu-let while the others' requests expire behind it;
// under eager it does not even run large batches. With a share set, a model
// earns requests at its rate (a token bucket holding at most its burst)
// and spends one per request it is sent. A model asking more than it earns
// (tokens below zero) goes after every model that does not: it runs only
// in time the others do not need, and what it asks beyond that expires,
// for that model alone. It is back in the first class as soon as its
// arrivals fall to its share. Within a class the policy's order holds;
// models within their shares are scheduled exactly as without shares.

// overLag pushes a model asking beyond its share behind every model that
// does not.
const overLag = 24 * time.Hour

// share is a model's token bucket; rate 0: no share is enforced.
type share struct {
	rate, burst, tokens float64
	at                  time.Duration
}

// SetShare sets model id's share on this gpu-let: rate requests per second,
// earned up to burst ahead (burst ≥ 1) and owed at most burst behind;
// rate 0 removes it. A new share keeps the standing of the old one.
func (s *Scheduler) SetShare(now time.Duration, id ModelID, rate, burst float64) error {
	now = s.clock(now)
	m := s.model(id)
	if m == nil {
		return fmt.Errorf("set share of model %d: %w", id, ErrUnknownModel)
	}
	if rate < 0 || (rate > 0 && burst < 1) {
		return fmt.Errorf("set share of model %d: %w: rate %g, burst %g", id, ErrBadConfig, rate, burst)
	}
	if rate == 0 {
		m.share = share{}
		return nil
	}
	tokens := burst
	if m.share.rate > 0 {
		m.share.refill(now)
		tokens = max(-burst, min(m.share.tokens, burst))
	}
	m.share = share{rate: rate, burst: burst, tokens: tokens, at: now}
	return nil
}

func (sh *share) refill(now time.Duration) {
	if now > sh.at {
		sh.tokens = min(sh.burst, sh.tokens+sh.rate*(now-sh.at).Seconds())
		sh.at = now
	}
}

// charge spends k requests of the share for requests admitted at now.
func (sh *share) charge(now time.Duration, k int) {
	if sh.rate == 0 {
		return
	}
	sh.refill(now)
	sh.tokens = max(-sh.burst, sh.tokens-float64(k))
}

// shareLag is what m's order key is pushed back by at now: overLag when m
// asks beyond its share.
func (m *model) shareLag(now time.Duration) time.Duration {
	if m.share.rate == 0 {
		return 0
	}
	m.share.refill(now)
	if m.share.tokens < 0 {
		return overLag
	}
	return 0
}
