package executor

import (
	"time"

	"github.com/gpulet/gpuletd/executor/sched"
	"go.uber.org/zap"
)

// addModel places a model on the scheduler and returns the entry it replaces.
func (l *loop) addModel(m *modelEntry) (old *modelEntry, err error) {
	ok := l.call(func() {
		id := -1
		for i, e := range l.ids {
			if e == nil {
				id = i
				break
			}
		}
		if id < 0 {
			id = len(l.ids)
			l.ids = append(l.ids, nil)
		}
		if err = l.sc.AddModel(l.now(), sched.ModelID(id), sched.ModelConfig{Latency: m.lat, MaxQueue: m.maxQueue}); err != nil {
			return
		}
		m.id = sched.ModelID(id)
		l.ids[id] = m
		l.modelChanges++
		if from := m.tunedFrom; from != nil {
			m.tunedFrom = nil
			m.calib = from.calib.Carried(sched.CalibrationCeiling(m.slo, m.base.At(1)))
			l.recalibrate(l.now(), m)
		}
	})
	if !ok {
		return nil, errStopping
	}
	if err != nil {
		return nil, err
	}
	if o, found := l.s.model(m.name); found {
		old = o
	}
	return old, nil
}

// retire takes a model off the scheduler (its queue is answered UNAVAILABLE)
// and closes it once no batch of it runs.
func (l *loop) retire(m *modelEntry) { l.handOver(m, nil) }

// handOver retires old as retire does, except that when a reload replaced
// it with to (the same model with a new batch cap or latency curve) its
// queued requests move to to, which serves them by their deadlines, instead
// of failing as an unload's do.
func (l *loop) handOver(old, to *modelEntry) {
	l.post(func() {
		if old.retired {
			return
		}
		old.retired = true
		l.modelChanges++
		if int(old.id) < len(l.ids) && l.ids[old.id] == old {
			l.handing = to
			_ = l.sc.RemoveModel(l.now(), old.id)
			l.handing = nil
			l.ids[old.id] = nil
			moved := l.moved
			l.moved = nil
			l.resubmit(to, moved)
		}
		if old.running == 0 {
			l.closeModel(old)
		}
	})
}

// resubmit queues requests handed over to m; when m itself is gone they
// are answered as an unload's are.
func (l *loop) resubmit(m *modelEntry, moved []sched.Request) {
	if len(moved) == 0 {
		return
	}
	now := l.now()
	if m.retired {
		for _, q := range moved {
			sink{l}.Reject(now, q, sched.ModelRemoved)
		}
		return
	}
	for i := range moved {
		moved[i].Model = m.id
		l.slots[moved[i].Slot].req.model = m
	}
	_ = l.sc.SubmitAll(now, moved)
}

// closeModel lets m's runtime go, and closes it when no other entry holds
// it (a retuned model's successor may).
func (l *loop) closeModel(m *modelEntry) {
	if m.refs != nil && !m.refs.release() {
		return
	}
	if err := m.rt.Close(); err != nil {
		l.s.log.Warn("close model", zap.String("model", m.name), zap.Error(err))
	}
}

// recalibrate gives the scheduler a model's ℓ(b) scaled by its
// calibration.
func (l *loop) recalibrate(now time.Duration, m *modelEntry) {
	lat, err := l.sc.Recalibrate(now, m.id, m.base, &m.calib)
	if err != nil {
		l.s.log.Warn("recalibrate", zap.String("model", m.name), zap.Error(err))
		return
	}
	l.recalibrated(m, lat)
}

// recalibrated keeps the ℓ(b) the scheduler now plans m's batches with.
func (l *loop) recalibrated(m *modelEntry, lat sched.Latency) {
	m.lat = lat
	l.s.log.Debug("recalibrated", zap.String("model", m.name), zap.Float64("factor", m.calib.Factor()), zap.Float64("typical", m.calib.Typical()), zap.Duration("l1", m.lat.At(1)))
}
