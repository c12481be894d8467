package mps

import (
	"context"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/gpulet/gpuletd/internal/ctxsleep"
)

// MPSState is where a supervised MPS control daemon stands.
type MPSState string

// MPS daemon states.
const (
	MPSRunning    MPSState = "running"
	MPSRestarting MPSState = "restarting"
	// MPSUnreachable: an existing daemon (not gpuletd's) does not answer.
	MPSUnreachable MPSState = "unreachable"
	MPSStopped     MPSState = "stopped"
)

// MPSStatus is the state of a device's MPS control daemon.
type MPSStatus struct {
	State    MPSState `json:"state"`
	PipeDir  string   `json:"pipe_dir"`
	Existing bool     `json:"existing"`
	// Restarts counts successful restarts since gpuletd started the daemon.
	Restarts  int       `json:"restarts"`
	LastError string    `json:"last_error,omitempty"`
	Since     time.Time `json:"since"`
}

// Backoff is an exponential backoff: Min, then doubling up to Max.
type Backoff struct {
	Min, Max time.Duration
}

// Delay is the wait before restart attempt n (1-based): Min·2^(n-1), capped at Max.
func (b Backoff) Delay(n int) time.Duration {
	d := b.Min
	for i := 1; i < n && d < b.Max; i++ {
		d *= 2
	}
	return min(d, b.Max)
}

// Supervisor keeps one control daemon alive: it queries it every interval
// (and notices at once when a foreground daemon exits) and restarts it with
// exponential backoff when it stops answering. The backoff grows across
// quick successive failures and starts over once the daemon has stayed up
// for Backoff.Max.
type Supervisor struct {
	d        *ControlDaemon
	interval time.Duration
	backoff  Backoff
	log      *zap.Logger

	mu     sync.Mutex
	status MPSStatus
}

// NewSupervisor makes a supervisor for a daemon that Start has brought up.
func NewSupervisor(d *ControlDaemon, interval time.Duration, backoff Backoff, log *zap.Logger) *Supervisor {
	return &Supervisor{
		d: d, interval: interval, backoff: backoff, log: log.With(zap.String("device", d.cfg.DeviceID)),
		status: MPSStatus{State: MPSRunning, PipeDir: d.cfg.PipeDir, Existing: d.cfg.Existing, Since: time.Now()},
	}
}

// Status returns the daemon's current state.
func (s *Supervisor) Status() MPSStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.status
}

func (s *Supervisor) set(state MPSState, err error, restarted bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.status.State != state {
		s.status.State, s.status.Since = state, time.Now()
	}
	if err != nil {
		s.status.LastError = err.Error()
	}
	if restarted {
		s.status.Restarts++
	}
}

// Run supervises until ctx ends; the caller owns the goroutine it runs in
// and waits for Run to return. It does not stop the daemon.
func (s *Supervisor) Run(ctx context.Context) {
	attempt := 0        // failed-and-restarted rounds since the daemon was last up for long
	trimFailed := false // said once
	upSince := time.Now()
	timer := time.NewTimer(s.interval)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		case <-s.d.Exited():
		}
		err := s.d.Ping(ctx)
		if ctx.Err() != nil {
			return
		}
		if err == nil {
			if s.Status().State != MPSRunning {
				s.set(MPSRunning, nil, false)
				s.log.Info("MPS control daemon answers again")
			}
			if terr := s.d.TrimLogs(); terr != nil {
				if !trimFailed {
					s.log.Warn("cannot trim the MPS control daemon's logs", zap.Error(terr))
				}
				trimFailed = true
			}
			timer.Reset(s.interval)
			continue
		}
		if s.d.cfg.Existing {
			if s.Status().State != MPSUnreachable {
				s.log.Error("existing MPS control daemon does not answer; it is not gpuletd's to restart", zap.Error(err))
			}
			s.set(MPSUnreachable, err, false)
			timer.Reset(s.interval)
			continue
		}
		s.log.Warn("MPS control daemon does not answer; restarting it", zap.Error(err))
		s.set(MPSRestarting, err, false)
		s.d.stopForeground() // reap a dead -f child before starting another
		if time.Since(upSince) >= s.backoff.Max {
			attempt = 0
		}
		for {
			attempt++
			wait := s.backoff.Delay(attempt)
			s.log.Info("restarting MPS control daemon", zap.Int("attempt", attempt), zap.Duration("backoff", wait))
			if ctxsleep.Sleep(ctx, wait) != nil {
				return
			}
			err := s.d.Start(ctx)
			if ctx.Err() != nil {
				return
			}
			if err == nil {
				s.set(MPSRunning, nil, true)
				s.log.Info("MPS control daemon restarted", zap.Int("attempt", attempt))
				upSince = time.Now()
				break
			}
			s.set(MPSRestarting, err, false)
			s.log.Warn("restart of MPS control daemon failed", zap.Int("attempt", attempt), zap.Error(err))
		}
		timer.Reset(s.interval)
	}
}

// markStopped records that the daemon was stopped on purpose.
func (s *Supervisor) markStopped() { s.set(MPSStopped, nil, false) }
