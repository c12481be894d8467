// Words of the page's summary: whether the server is ready and for what
// it waits, where gRPC listens, whether the NVIDIA GPUs serve, the
// warnings and errors of the last hour, the memory it holds.

import { bytes, clock } from './dom.js';

// readyWords says whether the server is ready and, if not, for what.
export function readyWords(st) {
  if (st.ready) return 'yes';
  const why = [];
  const p = st.profiling;
  if (p) why.push(p.beside ? `profiling ${p.model} on ${p.device} beside the serving gpu-lets` : `profiling ${p.model} on ${p.device}, ${p.profile} of ${p.of}`);
  if (st.waiting_for && st.waiting_for.length) why.push('waiting for ' + st.waiting_for.join(', '));
  if (st.not_ready_for && st.not_ready_for.length) why.push('strict readiness: ' + st.not_ready_for.join(', ') + ' cannot be served');
  return why.length ? `no (${why.join('; ')})` : 'no';
}

// besideWords says which profile runs gpuletd profile processes measure now
// beside the serving gpu-lets (profiled_beside), by whom, since when.
export function besideWords(runs) {
  return runs.map((b) => {
    const what = b.models && b.models.length ? b.models.join(', ') : `a file it does not serve (${b.sha256.slice(0, 12)}…)`;
    return `${b.by}: ${what} on ${b.device_type} since ${clock(b.since)}`;
  }).join('; ');
}

// grpcWords says where the gRPC listener is: off when grpc_listen is
// empty, a dash from a daemon that does not say.
export function grpcWords(addr) {
  if (addr === undefined) return '–';
  return addr === '' ? 'off (grpc_listen is empty)' : addr;
}

// engineWords says in a few words whether the NVIDIA GPUs serve.
export function engineWords(e) {
  if (!e || !e.gpus) return 'none found';
  if (e.using_gpus) return `${e.gpus} NVIDIA, ${e.provider}`;
  return `${e.gpus} NVIDIA, not used`;
}

// problemWords counts the warning and error events of the status's window
// (recent_problems); a dash from a daemon that does not count them.
export function problemWords(p) {
  if (!p) return '–';
  const parts = [];
  if (p.warnings) parts.push(p.warnings === 1 ? '1 warning' : `${p.warnings} warnings`);
  if (p.errors) parts.push(p.errors === 1 ? '1 error' : `${p.errors} errors`);
  return parts.length ? parts.join(', ') : 'no warnings';
}

// upWords says how long the daemon has run and since when (started, an
// ISO time; now in ms): 45s, 12m, 3h12m or 4d3h, then the start's time of
// day, or its date past a day. A dash from a daemon that does not say.
export function upWords(started, now = Date.now()) {
  const t = new Date(started || '');
  if (!started || Number.isNaN(t.getTime()) || t.getFullYear() < 2000) return '–';
  const s = Math.max(0, Math.floor((now - t.getTime()) / 1000));
  const m = Math.floor(s / 60), hrs = Math.floor(s / 3600), days = Math.floor(s / 86400);
  let up;
  if (s < 60) up = `${s}s`;
  else if (s < 3600) up = `${m}m`;
  else if (s < 86400) up = `${hrs}h${m % 60}m`;
  else up = `${days}d${hrs % 24}h`;
  const since = s < 86400 ? t.toLocaleTimeString('en-GB', { hour12: false }) : t.toLocaleString('en-GB', { hour12: false });
  return `${up} (since ${since})`;
}

// planWords says what the plan in force is: none yet, one that places
// every rate or leaves some unplaced, or an idle node's (plan.spread),
// whose rates are room given every model alike.
export function planWords(plan) {
  if (!plan) return 'none yet';
  if (plan.spread) return 'planned for no traffic: every model has an equal share of the GPUs\' time';
  return plan.schedulable ? 'every rate placed' : 'some rate unplaced';
}

// capacityWords says how far the planned load may grow, in the same mix,
// before the planner cannot place it all (the status's capacity): a dash
// before a plan with load. On the CPU (the status's capacity.cpu) the
// estimate counts the models' compute and, once measured, the executors'
// share of the request path, never the daemon's. spread: the plan is an
// idle node's, whose planned rates are room, not load: the rate alone.
export function capacityWords(c, spread) {
  if (!c) return '–';
  const atLeast = c.at_least ? '≥' : '';
  const ratio = atLeast + (c.ratio >= 10 ? whole(c.ratio) : c.ratio.toFixed(1)) + '×';
  const load = `${c.load >= 100 ? whole(c.load) : c.load.toFixed(1)} req/s`;
  // Not even a hundredth of the load fits: the mix, not the load.
  if (c.ratio === 0 && !c.at_least) return `none: however light the ${load} planned for, the plan leaves a model out (the models below say which, and why)`;
  if (c.ratio < 1 && !c.at_least) return `${ratio} the ${load} planned for: overloaded`;
  let cpu = '';
  if (c.cpu && (c.executor_path_us > 0 || c.daemon_path_us > 0)) {
    cpu = ` (on the CPU: with the executors' ${micros(c.executor_path_us)} of CPU a request; the daemon's ${micros(c.daemon_path_us)} shares the cores too)`;
  } else if (c.cpu) {
    cpu = ' (on the CPU: the models\' compute alone, the request path shares its cores)';
  }
  if (spread) return `${atLeast}${whole(c.rate)} req/s in all, in the planned mix${cpu}`;
  return `${ratio} the ${load} planned for, ${atLeast}${whole(c.rate)} req/s${cpu}`;
}

// whole writes x rounded, with thousands separators.
function whole(x) {
  return Math.round(x).toLocaleString('en-US');
}

// requestPathWords says what CPU a request takes beyond its model's run,
// as the daemon last measured it (the status's request_path): a dash
// before it has. The executors' share is measured on CPU gpu-lets of one
// core alone; elsewhere it is absent, which is not 0.
export function requestPathWords(p) {
  if (!p) return '–';
  if (p.executors_us === undefined || p.executors_us === null) {
    return `${micros(p.daemon_us)} of the daemon's CPU a request (executors' measured on CPU gpu-lets of one core alone)`;
  }
  return `${micros(p.per_request_us)} of CPU a request (daemon ${micros(p.daemon_us)}, executor ${micros(p.executors_us)})`;
}

// connectionsWords says the client connections against
// limits.max_connections (the status's connections), and what was refused
// over it since the start: a dash from a daemon that does not say.
export function connectionsWords(c) {
  if (!c) return '–';
  let s = `${c.open} of ${c.max} open (limits.max_connections)`;
  if (c.refused > 0) s += `, ${c.refused} refused over it since the start (health checks and scrapes are answered over it)`;
  return s;
}

// requestBytesWords says the request bytes in flight against
// limits.max_inflight_bytes (the status's request_bytes), what requests
// hold beside their bodies in a budget as large, the three models holding
// the most of both, and what was refused for want of room since the start:
// a dash from a daemon that does not say.
export function requestBytesWords(r) {
  if (!r) return '–';
  let s = `${r.held > 0 ? bytes(r.held) : '0'} of ${bytes(r.max)} (limits.max_inflight_bytes)`;
  if (r.beside > 0) s += `, and ${bytes(r.beside)} of as much beside them (decoded inputs, outputs)`;
  const models = Object.entries(r.models || {}).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  if (models.length) {
    const held = models.slice(0, 3).map(([m, n]) => `${m} ${bytes(n)}`);
    if (models.length > 3) held.push(`${models.length - 3} more`);
    s += `: ${held.join(', ')}`;
  }
  if (r.refused > 0) s += `; ${r.refused} refused for want of room since the start (memory_budget)`;
  return s;
}

// micros writes a CPU time given in µs, in ms from 1 ms.
function micros(us) {
  us = us || 0;
  return us < 1000 ? `${us.toFixed(0)}µs` : `${(us / 1000).toFixed(2)}ms`;
}

// memoryWords says what the daemon's memory cgroup holds, its executors'
// memory with its own, against the limit the kernel kills at (the
// status's memory): a dash where the daemon has none to read.
export function memoryWords(m) {
  if (!m) return '–';
  let s = bytes(m.working_set_bytes);
  if (m.limit_bytes > 0) {
    s += ` of a ${bytes(m.limit_bytes)} limit (${Math.round((100 * m.working_set_bytes) / m.limit_bytes)}%)`;
    if (m.near_limit) s += ', near it: at it the kernel kills an executor';
  } else {
    s += ', no limit';
  }
  if (m.oom_kills > 0) s += `; ${m.oom_kills} out-of-memory kill${m.oom_kills === 1 ? '' : 's'}`;
  return s;
}

// cpuMemoryWords says what the plan places in the CPU's gpu-lets against
// what their models may hold (host memory, or gpuletd's memory limit, less
// the daemon's own; the status's cpu_memory): a dash without a CPU device
// or before a plan.
export function cpuMemoryWords(c) {
  if (!c) return '–';
  const placed = c.placed_bytes > 0 ? bytes(c.placed_bytes) : 'nothing';
  if (!(c.models_bytes > 0)) return `${placed} placed; ${c.from}`;
  return `${placed} placed of ${bytes(c.models_bytes)} (${c.from})`;
}
