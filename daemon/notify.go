package daemon

import (
	"context"
	"net"
	"net/http"
	"time"

	sd "github.com/coreos/go-systemd/v22/daemon"
	"go.uber.org/zap"
)

// notify tells systemd about the daemon's state (Type=notify): READY=1,
// RELOADING=1, STOPPING=1, WATCHDOG=1. Without NOTIFY_SOCKET it does nothing.
func notify(log *zap.Logger, state string) {
	if _, err := sd.SdNotify(false, state); err != nil {
		log.Warn("notify systemd", zap.String("state", state), zap.Error(err))
	}
}

// watchdog pings systemd's watchdog at half its interval while the serving
// loop answers: each ping follows a successful GET /v2/health/live on the
// daemon's own listener, so a wedged HTTP server stops the pings and
// systemd restarts the daemon. header gives the headers that let the
// check through auth.restricted_apis. It returns when ctx ends.
func watchdog(ctx context.Context, log *zap.Logger, addr net.Addr, header func() map[string]string) {
	interval, err := sd.SdWatchdogEnabled(false)
	if err != nil || interval <= 0 {
		return
	}
	every := interval / 2
	client := &http.Client{Timeout: every}
	url := "http://" + addr.String() + "/v2/health/live"
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		req, _ := http.NewRequest(http.MethodGet, url, nil) // a URL that parses: no error
		for k, v := range header() {
			req.Header.Set(k, v)
		}
		resp, err := client.Do(req)
		if err != nil {
			log.Warn("watchdog: the daemon does not answer its own health check", zap.Error(err))
			continue
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			notify(log, sd.SdNotifyWatchdog)
		}
	}
}
