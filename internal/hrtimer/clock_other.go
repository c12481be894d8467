//go:build !linux

package hrtimer

import "errors"

// newClockFile has no kernel timer to offer here: the runtime's timers
// serve.
func newClockFile() (clockFile, error) {
	return nil, errors.New("no timerfd on this system")
}
