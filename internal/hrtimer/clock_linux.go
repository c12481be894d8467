package hrtimer

import (
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// timerFile is a timerfd on CLOCK_MONOTONIC, the clock of time.Now's
// monotonic reading, read through the runtime's poller.
type timerFile struct {
	fd int
	f  *os.File
}

func newClockFile() (clockFile, error) {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("create timerfd: %w", err)
	}
	// A non-blocking descriptor makes a file the poller waits on.
	return &timerFile{fd: fd, f: os.NewFile(uintptr(fd), "timerfd")}, nil
}

func (t *timerFile) set(d time.Duration) error {
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(d.Nanoseconds())}
	if err := unix.TimerfdSettime(t.fd, 0, &spec, nil); err != nil {
		return fmt.Errorf("arm timerfd: %w", err)
	}
	return nil
}

func (t *timerFile) wait() error {
	var expiries [8]byte
	if _, err := t.f.Read(expiries[:]); err != nil {
		return fmt.Errorf("read timerfd: %w", err)
	}
	return nil
}

// interrupt makes a wait in progress, or the next, fail.
func (t *timerFile) interrupt() { _ = t.f.SetReadDeadline(time.Unix(1, 0)) } // fails only on a closed file, which waits on nothing

func (t *timerFile) close() error { return t.f.Close() }
