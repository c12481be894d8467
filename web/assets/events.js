// The event feed: server-sent events from /api/v1/events/stream (its
// history first, then live ones), newest first.

import { h, clock } from './dom.js';

// KINDS are the event kinds the daemon writes (daemon/events.go; a test
// there holds this list to them). The stream names each event by its kind,
// and EventSource delivers a named event only to a listener for that name.
const KINDS = [
  'daemon_start',
  'daemon_stop',
  'reorganize',
  'plan',
  'executor_start',
  'executor_restart',
  'executor_stop',
  'executor_stall',
  'model_invalid',
  'model_load',
  'model_unload',
  'profile_job',
  'config_reload',
  'devices',
  'store',
  'slo_unreachable',
  'request_limit',
  'request_quarantined',
];

const MAX = 200; // events kept on the page

// Events follows the stream and draws the list.
export class Events {
  // onEvent(kind) is called for each new event; onState(state) with
  // 'live', 'reconnecting' or 'closed'.
  constructor(list, onEvent, onState) {
    this.list = list;
    this.onEvent = onEvent;
    this.onState = onState;
    this.lastID = 0;
    this.model = ''; // the one model whose events are shown; '' for all
    this.pending = [];
    this.flushQueued = false;
    this.connect();
  }

  connect() {
    const url = 'api/v1/events/stream' + (this.lastID ? '?since=' + this.lastID : '');
    const es = new EventSource(url);
    this.es = es;
    const handle = (msg) => this.receive(msg);
    for (const k of KINDS) es.addEventListener(k, handle);
    es.addEventListener('message', handle);
    es.addEventListener('open', () => this.onState('live'));
    es.addEventListener('error', () => {
      if (es.readyState === EventSource.CLOSED) {
        // The browser gave up (the answer was not a stream): try again later.
        this.onState('closed');
        setTimeout(() => this.connect(), 5000);
      } else {
        this.onState('reconnecting');
      }
    });
  }

  receive(msg) {
    let e;
    try {
      e = JSON.parse(msg.data);
    } catch {
      return;
    }
    const id = e.ID ?? e.id ?? 0;
    if (id && id <= this.lastID) return; // already shown (a reconnect resent it)
    if (id) this.lastID = id;
    this.pending.push(e);
    this.onEvent(e.Kind ?? e.kind ?? msg.type);
    if (!this.flushQueued) {
      this.flushQueued = true;
      setTimeout(() => this.flush(), 0);
    }
  }

  // setModel shows only the events that name model ('' for all), as
  // gpuletd events --model does.
  setModel(model) {
    this.model = model;
    for (const li of this.list.children) this.filter(li);
  }

  filter(li) {
    li.hidden = this.model !== '' && !(li.dataset.models || '').split(' ').includes(this.model);
    return li;
  }

  flush() {
    this.flushQueued = false;
    const items = this.pending.splice(0).slice(-MAX).reverse().map((e) => this.filter(item(e)));
    this.list.prepend(...items);
    while (this.list.children.length > MAX) this.list.lastElementChild.remove();
  }
}

// item is one event as a list item.
function item(e) {
  const kind = e.Kind ?? e.kind ?? '';
  const sev = e.Severity ?? e.severity ?? 'info';
  const at = e.At ?? e.at ?? '';
  const attrs = e.Attrs ?? e.attrs ?? {};
  const keys = Object.keys(attrs).sort();
  // The models the event concerns, as gpuletd events --model finds them.
  const models = [attrs.model, ...(attrs.models ? attrs.models.split(',') : [])].filter(Boolean);
  return h(
    'li',
    { class: `ev sev-${sev}`, 'data-id': e.ID ?? e.id ?? '', 'data-kind': kind, 'data-severity': sev, 'data-models': models.join(' ') },
    h('time', { datetime: at, text: clock(at) }),
    h('span', { class: 'kind', text: kind }),
    sev !== 'info' ? h('span', { class: 'sev', text: sev }) : null,
    h('span', { class: 'msg', text: e.Message ?? e.message ?? '' }),
    keys.length ? h('span', { class: 'attrs', text: keys.map((k) => `${k}=${attrs[k]}`).join(' ') }) : null,
  );
}
