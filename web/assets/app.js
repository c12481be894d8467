// The admin page: polls /api/v1/status every 2 s (and at once when the
// event stream says something changed) and redraws every panel from it.

import { h, rate, clock } from './dom.js';
import { Devices } from './partitions.js';
import { renderModels } from './models.js';
import { renderPipelines } from './pipelines.js';
import { Profiles } from './profiles.js';
import { Events } from './events.js';
import { readyWords, besideWords, grpcWords, engineWords, problemWords, upWords, planWords, capacityWords, requestPathWords, memoryWords, cpuMemoryWords, connectionsWords, requestBytesWords } from './summary.js';

const POLL_MS = 2000;
const SOON_MS = 150; // after an event that changes the status

// Event kinds after which the status is fetched at once.
const CHANGES = new Set(['reorganize', 'plan', 'executor_start', 'executor_restart', 'executor_stop', 'executor_stall', 'request_quarantined', 'model_load', 'model_unload', 'model_invalid', 'config_reload']);

const $ = (id) => document.getElementById(id);

const devices = new Devices($('devices'));
const profiles = new Profiles($('profiles'));
const conn = { stream: 'connecting', poll: 'connecting' };

let timer = 0;
let inflight = false;
let again = false;

function schedule(delay) {
  clearTimeout(timer);
  timer = setTimeout(poll, delay);
}

async function poll() {
  if (inflight) {
    again = true;
    return;
  }
  inflight = true;
  try {
    const resp = await fetch('api/v1/status', { cache: 'no-store' });
    if (!resp.ok) throw new Error(`status ${resp.status}`);
    render(await resp.json());
    conn.poll = 'ok';
  } catch (err) {
    conn.poll = 'down';
    conn.pollError = err.message;
  } finally {
    inflight = false;
    showConn();
    schedule(again ? 0 : POLL_MS);
    again = false;
  }
}

let rendered = false;

function render(st) {
  renderSummary(st);
  renderPlanNote(st);
  devices.render(st);
  renderModels(document.querySelector('#models-table tbody'), st);
  renderPipelines(document.querySelector('#pipelines-table tbody'), st);
  syncEventModels(st);
  profiles.sync(st.models || []);
  $('profiles-all').textContent = profiles.allOpen() ? 'Close all' : 'Open all';
  if (!rendered) openFromHash(); // a link to a profile opens it once
  rendered = true;
}

function renderSummary(st) {
  const items = [
    ['Version', st.version],
    ['Up', upWords(st.started)],
    ['Ready', readyWords(st)],
    ['gRPC', grpcWords(st.grpc_listen)],
    ['GPUs', engineWords(st.engine)],
    ['Policy', st.policy],
    ['Planner', st.algorithm],
    ['Plan', planWords(st.plan)],
    ['Planned', st.plan_at ? `${clock(st.plan_at)}${st.plan_reason ? ' (' + st.plan_reason + ')' : ''}` : '–'],
    ['Capacity', capacityWords(st.capacity, st.plan?.spread)],
    ['Request path', requestPathWords(st.request_path)],
    ['Memory', memoryWords(st.memory)],
    ['CPU models', cpuMemoryWords(st.cpu_memory)],
    ['Connections', connectionsWords(st.connections)],
    ['Request bytes', requestBytesWords(st.request_bytes)],
    ['Reorganizations', String(st.reorganizations)],
    ['Executor restarts', String(st.executor_restarts)],
    ['Last hour', problemWords(st.recent_problems)],
  ];
  if (st.metrics_listen) items.splice(3, 0, ['Metrics', `${st.metrics_listen} (/metrics alone)`]);
  if (st.not_loaded && st.not_loaded.length) items.push(['Not loaded', st.not_loaded.join(', ') + ' (startup_models)']);
  if (st.unloaded && st.unloaded.length) items.push(['Unloaded', st.unloaded.join(', ') + ' (gpuletd models load NAME)']);
  if (st.profiled_beside && st.profiled_beside.length) items.push(['Profiled beside', besideWords(st.profiled_beside)]);
  $('summary').replaceChildren(
    ...items.map(([k, v]) => h('div', { class: 'kv', 'data-key': k.toLowerCase().replace(/ /g, '-') }, h('dt', { text: k }), h('dd', { text: v }))),
  );
}


// renderEngineNote says why the NVIDIA GPUs are not used, or why another
// execution provider than the configured one serves, and the fix.
function renderEngineNote(st) {
  const note = $('engine-note');
  const e = st.engine || {};
  let text = '';
  if (e.reason) text = `Serving on the CPU: ${e.reason}. Fix: ${e.fix}`;
  else if (e.asked) text = `Execution provider ${e.provider}, not ${e.asked} as configured: ${e.provider_note}.${e.provider_fix ? ' Fix: ' + e.provider_fix : ''}`;
  note.hidden = !text;
  note.textContent = text;
}

function renderPlanNote(st) {
  renderEngineNote(st);
  const note = $('plan-note');
  const un = (st.plan && st.plan.unscheduled) || {};
  const names = Object.keys(un).sort();
  if (!st.plan) {
    note.hidden = false;
    note.textContent = 'No plan yet: the daemon is still starting or has no models.';
  } else if (names.length) {
    const reasons = st.plan.unscheduled_reasons || {};
    note.hidden = false;
    note.textContent =
      'Not placed: ' + names.map((n) => `${n} ${rate(un[n])} req/s${reasons[n] ? ' (' + reasons[n] + ')' : ''}`).join('; ');
  } else {
    note.hidden = true;
    note.textContent = '';
  }
}

function showConn() {
  const el = $('conn');
  let state;
  let text;
  if (conn.poll === 'down') {
    state = 'down';
    text = `daemon unreachable (${conn.pollError}); retrying`;
  } else if (conn.stream === 'live') {
    state = 'live';
    text = 'live';
  } else if (conn.poll === 'ok') {
    state = 'polling';
    text = 'polling; event stream ' + conn.stream;
  } else {
    state = 'connecting';
    text = 'connecting…';
  }
  if (el.dataset.state !== state || el.textContent !== text) {
    el.dataset.state = state;
    el.textContent = text;
  }
}

function openFromHash() {
  const m = location.hash.match(/^#profile-(.+)$/);
  if (!m) return;
  const el = document.getElementById('profile-' + m[1]);
  if (el && !el.open) {
    el.open = true;
    el.scrollIntoView({ block: 'start' });
  }
}

async function reorganize() {
  const btn = $('reorganize');
  const out = $('action-result');
  btn.disabled = true;
  $('preview-steps').hidden = true;
  $('preview-notes').textContent = '';
  out.textContent = 'Re-planning…';
  try {
    const resp = await fetch('api/v1/reorganize', { method: 'POST' });
    const body = await resp.json().catch(() => ({}));
    if (!resp.ok) throw new Error(body.error || `status ${resp.status}`);
    out.textContent = `Re-planned at ${clock(body.at)}.`;
  } catch (err) {
    out.textContent = `Could not reorganize: ${err.message}`;
  } finally {
    btn.disabled = false;
    schedule(0);
  }
}

// preview asks what reorganizing now would do (POST /api/v1/plan/preview
// at the current estimates) and lists its steps; it changes nothing.
async function preview() {
  const btn = $('preview');
  const out = $('action-result');
  const steps = $('preview-steps');
  btn.disabled = true;
  steps.hidden = true;
  $('preview-notes').textContent = '';
  out.textContent = 'Planning…';
  try {
    const resp = await fetch('api/v1/plan/preview', { method: 'POST' });
    const body = await resp.json().catch(() => ({}));
    if (!resp.ok) throw new Error(body.error || `status ${resp.status}`);
    if (body.unchanged) {
      out.textContent = 'Reorganizing now would change nothing.';
      steps.replaceChildren();
      return;
    }
    out.textContent = 'Reorganizing now would, in this order:';
    steps.replaceChildren(...(body.steps || []).map((s) => h('li', { text: s })));
    steps.hidden = false;
    $('preview-notes').textContent = (body.notes || []).join(' ');
  } catch (err) {
    out.textContent = `Could not preview: ${err.message}`;
  } finally {
    btn.disabled = false;
  }
}

$('preview').addEventListener('click', preview);
$('reorganize').addEventListener('click', reorganize);
$('profiles-all').addEventListener('click', () => {
  profiles.openAll(!profiles.allOpen());
  $('profiles-all').textContent = profiles.allOpen() ? 'Close all' : 'Open all';
});
window.addEventListener('hashchange', openFromHash);
// A model's name in the table opens its profile, also when the address
// already names it (no hashchange then).
document.getElementById('models-table').addEventListener('click', (ev) => {
  const a = ev.target.closest('a[href^="#profile-"]');
  const el = a && document.getElementById(a.getAttribute('href').slice(1));
  if (el) el.open = true;
});

// The events list shows only warnings and errors while the box is ticked,
// and only one model's events while the list names one.
$('events-problems').addEventListener('change', (ev) => {
  $('events').classList.toggle('only-problems', ev.target.checked);
});
$('events-model').addEventListener('change', (ev) => events.setModel(ev.target.value));

// syncEventModels offers the status's models and pipelines in the events'
// model list, keeping the one chosen.
function syncEventModels(st) {
  const sel = $('events-model');
  const names = [...(st.models || []), ...(st.pipelines || [])].map((m) => m.name).sort();
  const have = [...sel.options].slice(1).map((o) => o.value);
  if (names.join('\n') === have.join('\n')) return;
  const chosen = sel.value;
  sel.replaceChildren(h('option', { value: '', text: 'all' }), ...names.map((n) => h('option', { value: n, text: n })));
  sel.value = names.includes(chosen) ? chosen : '';
  if (sel.value !== chosen) events.setModel('');
}

const events = new Events(
  $('events'),
  (kind) => {
    if (CHANGES.has(kind)) schedule(SOON_MS);
    if (kind === 'profile_job') profiles.invalidate();
  },
  (state) => {
    conn.stream = state;
    showConn();
  },
);

poll();

