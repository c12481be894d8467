package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/gpulet/gpuletd/internal/dirlock"
	"github.com/gpulet/gpuletd/internal/fsperm"
	"go.uber.org/zap"
)

// A profile run beside a serving daemon.
//
// `gpuletd profile` may run while the daemon serves from the same
// configuration (OPERATIONS.md section 5: a full measurement of a model
// the daemon measured quickly). On a GPU partitioned with MPS both then
// reach the MPS control daemons through runtime_dir's pipe directories.
// Those are the daemon's, which supervises and restarts them: the profile
// borrows them (mps.Options.BorrowMPS). Before, it took them over and quit
// them as it ended, under the daemon's executors. The other way round, a
// daemon started while a profile runs finds the profile's MPS answering
// and takes it over; the profile then leaves it running.

// daemonBeside says whether a daemon holds runtimeDir, and which, as
// dirlock.Holder words it. A lock that cannot be looked at counts as none.
func daemonBeside(runtimeDir string) (holder string, serving bool) {
	held, err := dirlock.Held(runtimeDir)
	if err != nil || !held {
		return "", false
	}
	return dirlock.Holder(runtimeDir), true
}

// besideNote tells the user of a profile run beside a daemon that each
// slows the other.
func besideNote(w io.Writer, runtimeDir, holder, device string) {
	fmt.Fprintf(w, "gpuletd%s serves from runtime_dir %s: this profile is measured beside its gpu-lets on %s, whose work slows it (and it theirs); for a measurement alone, profile while the daemon is stopped\n",
		holder, runtimeDir, device)
}

// mpsUserCheck refuses to borrow the daemon's MPS on a GPU as another
// user than the daemon's (pipeDir's owner). MPS runs one user's clients at
// a time: the control daemon starts a client of another user only once
// every client of the server running has ended, so this profile's
// executors would wait for all of the daemon's, and those the daemon
// starts meanwhile wait behind them. `sudo gpuletd profile` beside the
// service is the way to meet it.
func mpsUserCheck(pipeDir string, euid int) error {
	uid, name, ok := fsperm.Owner(pipeDir)
	if !ok || int(uid) == euid {
		return nil
	}
	return &exitError{code: 2, msg: fmt.Sprintf("gpuletd: the daemon beside this profile runs MPS as %s (uid %d), and MPS runs the clients of one user at a time: "+
		"this profile's executors would wait until the daemon's had all ended, and the daemon's new ones behind them; "+
		"run it as that user (sudo -u %s gpuletd profile …), or stop the daemon first", name, uid, name)}
}

// mpsCloser is what closeProfileDevices needs of *mps.Manager.
type mpsCloser interface {
	KeepMPS()
	Close(ctx context.Context) error
}

// closeProfileDevices closes the profile's devices. MPS the profile
// started itself is left running when a daemon has taken runtimeDir since
// (and with it that MPS); otherwise the profile holds runtimeDir while its
// MPS stops, so that no daemon starting meanwhile takes over a control
// daemon that is quitting. Borrowed MPS is never stopped (mps.Manager).
func closeProfileDevices(ctx context.Context, devs mpsCloser, runtimeDir string, startedMPS bool, log *zap.Logger) error {
	if startedMPS {
		lock, err := dirlock.Lock(runtimeDir)
		switch {
		case errors.Is(err, dirlock.ErrInUse):
			devs.KeepMPS()
			log.Info("a daemon started on runtime_dir while the profile ran and took its MPS control daemons over: they are left running",
				zap.String("runtime_dir", runtimeDir), zap.String("daemon", dirlock.Holder(runtimeDir)))
		case err != nil:
			log.Warn("cannot hold runtime_dir while MPS stops", zap.String("runtime_dir", runtimeDir), zap.Error(err))
		default:
			defer lock.Close()
		}
	}
	return devs.Close(context.WithoutCancel(ctx))
}
