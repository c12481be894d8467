package daemon

import (
	"fmt"
	"reflect"
	"slices"

	"github.com/gpulet/gpuletd/daemon/config"
	"github.com/gpulet/gpuletd/profiler/store"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// liveFields are the configuration fields a reload applies at once; every
// other change waits for a restart.
var liveFields = map[string]bool{
	"log.level":                        true,
	"metrics.triton_names":             true, // read at every scrape
	"metrics.triton_latency_counters":  true, // read at every scrape
	"metrics.triton_summaries":         true, // read at every request and scrape
	"metrics.triton_summary_quantiles": true, // new quantiles start the summaries anew
	"scheduler.policy":                 true, // running executors switch in place (applyToExecutors)
	"scheduler.algorithm":              true,
	"scheduler.idle_plan":              true,
	"scheduler.reorganize_period":      true,
	"scheduler.ewma_weight":            true,
	"scheduler.priority_reserve":       true, // read at every request
	"limits.max_request_body":          true,
	"limits.max_queued_per_model":      true, // running executors' models are retuned
	"auth.admin_token":                 true,
	"auth.restricted_apis":             true, // read at every request
	"history_retention":                true, // from the next hourly pruning
	"repository_poll":                  true, // the planner loop's poll restarts
	"response_cache.size":              true, // shrinking drops the least recently used
	"strict_readiness":                 true, // read at every readiness check
	"allow_client_shm":                 true, // read at every registration; off drops the regions
	"limits.shutdown_timeout":          true, // read when the daemon stops
}

// reload applies a new, already validated configuration: what can change
// live does; the rest is reported as needing a restart and left as it was.
func (n *node) reload(next *config.Config) (applied, needRestart []string) {
	cur := *n.conf()
	merged := cur
	changes := diffConfig(cur, *next)
	for _, f := range changes {
		if !liveFields[f] {
			needRestart = append(needRestart, f)
			continue
		}
		if f == "limits.max_request_body" {
			ok, note := n.bodyLimitLive(next.Limits.MaxRequestBody)
			if note != "" {
				needRestart = append(needRestart, note)
			}
			if !ok {
				continue
			}
		}
		applied = append(applied, f)
		switch f {
		case "log.level":
			merged.Log.Level = next.Log.Level
			if n.level != nil {
				if lvl, err := zapcore.ParseLevel(next.Log.Level); err == nil {
					n.level.SetLevel(lvl)
				}
			}
		case "metrics.triton_names":
			merged.Metrics.TritonNames = next.Metrics.TritonNames
		case "metrics.triton_latency_counters":
			merged.Metrics.TritonLatencyCounters = next.Metrics.TritonLatencyCounters
		case "metrics.triton_summaries":
			merged.Metrics.TritonSummaries = next.Metrics.TritonSummaries
		case "metrics.triton_summary_quantiles":
			merged.Metrics.TritonSummaryQuantiles = next.Metrics.TritonSummaryQuantiles
		case "scheduler.policy":
			merged.Scheduler.Policy = next.Scheduler.Policy
		case "scheduler.algorithm":
			merged.Scheduler.Algorithm = next.Scheduler.Algorithm
		case "scheduler.idle_plan":
			merged.Scheduler.IdlePlan = next.Scheduler.IdlePlan
		case "scheduler.reorganize_period":
			merged.Scheduler.ReorganizePeriod = next.Scheduler.ReorganizePeriod
		case "scheduler.priority_reserve":
			merged.Scheduler.PriorityReserve = next.Scheduler.PriorityReserve
		case "scheduler.ewma_weight":
			merged.Scheduler.EWMAWeight = next.Scheduler.EWMAWeight
			n.rates.setWeight(next.Scheduler.EWMAWeight)
			n.stepRates.setWeight(next.Scheduler.EWMAWeight)
		case "limits.max_request_body":
			merged.Limits.MaxRequestBody = next.Limits.MaxRequestBody
			n.catalog.warnRequestLimit(int64(next.Limits.MaxRequestBody))
		case "limits.max_queued_per_model":
			merged.Limits.MaxQueuedPerModel = next.Limits.MaxQueuedPerModel
		case "auth.admin_token":
			merged.Auth.AdminToken = next.Auth.AdminToken
		case "auth.restricted_apis":
			merged.Auth.RestrictedAPIs = next.Auth.RestrictedAPIs
		case "history_retention":
			merged.HistoryRetention = next.HistoryRetention
		case "repository_poll":
			merged.RepositoryPoll = next.RepositoryPoll
		case "strict_readiness":
			merged.StrictReadiness = next.StrictReadiness
		case "allow_client_shm":
			merged.AllowClientSHM = next.AllowClientSHM
		case "limits.shutdown_timeout":
			merged.Limits.ShutdownTimeout = next.Limits.ShutdownTimeout
		case "response_cache.size":
			merged.ResponseCache.Size = next.ResponseCache.Size
			if n.cache != nil {
				n.cache.resize(int64(next.ResponseCache.Size))
			}
		}
	}
	n.cfg.Store(&merged)
	if slices.Contains(applied, "allow_client_shm") && !merged.AllowClientSHM && n.shm != nil {
		// After the store: a registration either sees the setting off or
		// took its region before this drops it.
		n.shm.close()
		n.log.Info("allow_client_shm turned off: every shared-memory region registered is dropped")
	}
	if slices.Contains(applied, "limits.max_request_body") {
		n.grpc.renew() // its message cap is the new limit
	}
	n.sup.setArgs(executorArgs(merged, n.onnxLib))
	select {
	case n.reloaded <- struct{}{}:
	default:
	}
	return applied, needRestart
}

// bodyLimitLive says whether a new limits.max_request_body can apply now,
// and what of it waits for a restart: a body of the new limit must fit the
// budget of bytes in flight sized at start (else nothing changes until a
// restart with limits.max_inflight_bytes). The gRPC server's message cap
// follows it: the reload builds a gRPC server with the new cap
// (grpcFront.renew).
func (n *node) bodyLimitLive(limit config.ByteSize) (ok bool, note string) {
	if n.bodies != nil && int64(limit) > n.bodies.MaxBody() {
		return false, fmt.Sprintf("limits.max_request_body (%s: one body of it would overfill limits.max_inflight_bytes, %s, as it runs)", limit, config.ByteSize(n.bodies.Max()))
	}
	return true, ""
}

// diffConfig lists the dotted names of the fields that differ.
func diffConfig(a, b config.Config) []string {
	var out []string
	var walk func(prefix string, va, vb reflect.Value)
	walk = func(prefix string, va, vb reflect.Value) {
		t := va.Type()
		for i := range t.NumField() {
			name := t.Field(i).Tag.Get("yaml")
			for j, c := range name {
				if c == ',' {
					name = name[:j]
					break
				}
			}
			p := name
			if prefix != "" {
				p = prefix + "." + name
			}
			fa, fb := va.Field(i), vb.Field(i)
			if fa.Kind() == reflect.Struct && t.Field(i).Type != reflect.TypeFor[config.Devices]() {
				walk(p, fa, fb)
				continue
			}
			if !reflect.DeepEqual(fa.Interface(), fb.Interface()) {
				out = append(out, p)
			}
		}
	}
	walk("", reflect.ValueOf(a), reflect.ValueOf(b))
	return out
}

// handleReload loads the configuration again and applies it, or keeps the
// old one when the new one is invalid; either way it is recorded, and the
// planner loop follows the model repository (repo_watch.go).
func (n *node) handleReload(load func() (*config.Loaded, error)) {
	l, err := load()
	if err != nil {
		n.events.add(EventConfigReload, store.SeverityError, "configuration not reloaded, the old one stays: "+err.Error(), nil)
		select { // the repository is followed all the same
		case n.reloaded <- struct{}{}:
		default:
		}
		return
	}
	applied, restart := n.reload(&l.Config)
	msg := fmt.Sprintf("configuration reloaded: %d change(s) applied", len(applied))
	sev := store.SeverityInfo
	if len(restart) > 0 {
		msg += fmt.Sprintf("; %v take effect after a restart", restart)
		sev = store.SeverityWarning
	}
	if n.tls != nil {
		// A renewed certificate in the same files serves new connections
		// from now on; one that does not load leaves the old one serving.
		if err := n.tls.load(); err != nil {
			msg += "; the TLS certificate in use stays: " + err.Error()
			sev = store.SeverityError
		} else {
			msg += "; TLS certificate " + n.tls.describe()
		}
	}
	n.events.add(EventConfigReload, sev, msg, map[string]string{"applied": fmt.Sprint(applied), "restart": fmt.Sprint(restart)})
	n.log.Info("reload", zap.Strings("applied", applied), zap.Strings("needs_restart", restart))
}
