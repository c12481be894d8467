package executor

// The loop's timer. The scheduler's next wake-up and the state's next frame
// share one timer, set for the earlier, and a wake-up handles what is due
// in the order it fell due. With a timer each, a host that held the loop's
// process back past both delivered them in either order: a frame due
// before a deferred batch started then went out after it, and a watcher
// never saw the batch's requests queued (TestWatchStateReportsQueue failed
// 8 times in 30 with three busy loops on two cores).

// woken handles a firing of the loop's timer: the state's frame if it is
// due, then the scheduler's wake-up if it is, or the other way round when
// the wake-up fell due first.
func (l *loop) woken() {
	now := l.now()
	frame := l.pubArmed && now >= l.pubAt
	wake := l.due && now >= l.wokeFor
	if frame {
		l.pubArmed = false // the loop's iteration publishes, if not here
		if !wake || l.pubAt <= l.wokeFor {
			l.publish() // the state as the frame's time saw it
		}
	}
	if wake {
		// Act as of the event's own time: the timer was set early by the
		// slack, or the host stalled the loop past it. In the second case
		// the batch starts late and its answers may be late, but a
		// request is never refused for a stall of the executor itself (it
		// would have met its deadline had the wake-up been on time).
		l.due = false
		l.slack.observe(now - l.wokeFor)
		l.sc.Advance(l.wakeAt)
	}
}

// setTimer sets the loop's timer for the earlier of the scheduler's
// wake-up and the state's next frame, or stops it when neither is due. A
// timer set for that time already is left as it is: setting one is a
// system call.
func (l *loop) setTimer() {
	at, ok := l.wokeFor, l.due
	if l.pubArmed && (!ok || l.pubAt < at) {
		at, ok = l.pubAt, true
	}
	switch {
	case !ok:
		if l.timerSet {
			l.timer.Stop()
			l.timerSet = false
		}
	case l.timerSet && at == l.timerAt:
	default:
		l.timerSet, l.timerAt = true, at
		l.timer.Reset(at - l.now())
	}
}
