package daemon

import (
	"fmt"

	"go.uber.org/zap"

	"github.com/gpulet/gpuletd/profiler/store"
)

// loadFailed says that a load of model name failed with ierr, wherever it
// was asked (the repository API over REST or gRPC, a reload or a poll of
// the repository): in the log and in a warning event, which the caller's
// answer alone left out of the daemon's history. (A model loaded but on
// its way to a gpu-let, to be profiled beside the serving ones or on a
// gpu-let that starts once old ones drain, has not failed: its caller
// does not report it.)
//
// folderBroken says that the model's folder in the repository itself did
// not load (not an upload or a configuration the request brought). When
// the model served before, it keeps serving the files it was loaded from,
// but a restart would leave it out: the model carries a warning saying so
// (stale) until a load of it succeeds or it is unloaded.
func (n *node) loadFailed(name string, ierr *inferError, folderBroken, served bool) {
	msg := fmt.Sprintf("loading %s failed: %s", name, ierr.msg)
	if folderBroken && served {
		why := fmt.Sprintf("its folder in the model repository does not load (%s): it serves the files it was loaded from before, "+
			"and a restart would leave it out; mend the folder (gpuletd models check), then load it again (gpuletd models load %s)", ierr.msg, name)
		n.stale.set(name, why)
		msg += "; it keeps serving the files it was loaded from before, which a restart would not find"
	}
	n.log.Warn("model load failed", zap.String("model", name), zap.String("error", ierr.msg))
	n.events.add(EventModelLoad, store.SeverityWarning, msg, map[string]string{"model": name})
}
