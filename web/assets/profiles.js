// The profiles panel: one collapsible entry per model; opening one fetches
// /api/v1/models/{m}/profile and draws its L(b,p) curves and knee.

import { h, num, cssIdent } from './dom.js';
import { latencyChart, kneeChart } from './charts.js';

// Profiles keeps an entry per served model and the profiles it fetched.
export class Profiles {
  constructor(root) {
    this.root = root;
    this.entries = new Map(); // model → {details, body, loaded}
    this.lastWidth = 0;
    new ResizeObserver(() => {
      const w = this.root.clientWidth;
      if (w === this.lastWidth) return;
      this.lastWidth = w;
      for (const [name, e] of this.entries) if (e.details.open && e.doc) this.draw(name, e);
    }).observe(root);
  }

  // sync adds entries for new models and drops those no longer served,
  // keeping the open ones as they are.
  sync(models) {
    const names = models.map((m) => m.name);
    for (const [name, e] of this.entries) {
      if (!names.includes(name)) {
        e.details.remove();
        this.entries.delete(name);
      }
    }
    models.forEach((m, i) => {
      let e = this.entries.get(m.name);
      if (!e) {
        e = this.entry(m);
        this.entries.set(m.name, e);
      }
      // A model that cannot be served may have no SLO yet (a folder without one).
      e.slo.textContent = m.slo_ms ? `SLO ${num(m.slo_ms)} ms` : 'no SLO';
      // The status order, moving an entry only when it is out of place: a
      // move detaches it, which loses what the reader was about to click.
      const at = this.root.children[i];
      if (at !== e.details) this.root.insertBefore(e.details, at ?? null);
    });
  }

  entry(m) {
    const slo = h('span', { class: 'sub' });
    const body = h('div', { class: 'charts' });
    const details = h(
      'details',
      { class: 'profile', id: 'profile-' + cssIdent(m.name), 'data-model': m.name },
      h('summary', {}, h('span', { class: 'name', text: m.name }), ' ', slo),
      body,
    );
    const e = { details, body, slo, doc: null, loading: false };
    details.addEventListener('toggle', () => {
      if (details.open) this.load(m.name, e);
    });
    return e;
  }

  // invalidate forgets fetched profiles (a profile job finished) and
  // reloads the open ones.
  invalidate() {
    for (const [name, e] of this.entries) {
      e.doc = null;
      if (e.details.open) this.load(name, e);
    }
  }

  // open opens one model's entry (or all) and brings it into view.
  open(name) {
    const e = this.entries.get(name);
    if (!e) return;
    e.details.open = true;
    e.details.scrollIntoView({ block: 'start' });
  }

  openAll(open = true) {
    for (const e of this.entries.values()) e.details.open = open;
  }

  allOpen() {
    return this.entries.size > 0 && [...this.entries.values()].every((e) => e.details.open);
  }

  async load(name, e) {
    if (e.doc || e.loading) {
      if (e.doc) this.draw(name, e);
      return;
    }
    e.loading = true;
    e.body.replaceChildren(h('p', { class: 'loading', text: 'Loading profile…' }));
    try {
      const resp = await fetch('api/v1/models/' + encodeURIComponent(name) + '/profile', { cache: 'no-store' });
      const doc = await resp.json();
      if (!resp.ok) throw new Error(doc.error || resp.statusText);
      e.doc = doc;
      this.draw(name, e);
    } catch (err) {
      e.body.replaceChildren(h('p', { class: 'error', text: `Could not load the profile of ${name}: ${err.message}` }));
    } finally {
      e.loading = false;
    }
  }

  draw(name, e) {
    const doc = e.doc;
    if (!doc.profiles || !doc.profiles.length) {
      e.body.replaceChildren(h('p', { class: 'empty', text: `${name} has no profile on these devices yet.` }));
      return;
    }
    const avail = Math.max(260, e.body.clientWidth || this.root.clientWidth);
    const two = avail >= 900;
    const w = Math.floor(Math.min(560, two ? (avail - 24) / 2 : avail));
    const figs = doc.profiles.map((p) => {
      const [lat, legend] = latencyChart(name, p, doc.slo_ms, w);
      const kc = kneeChart(name, p, w);
      return h(
        'figure',
        { class: 'profile-fig', 'data-device-type': p.device_type },
        h('figcaption', {}, `${name} on ${p.device_type}`, p.knee_size ? ` — knee at ${p.knee_size}%` : ' — no size meets the SLO', memoryWords(p), inputsWords(p)),
        h('div', { class: 'chart-pair' }, h('div', { class: 'chart-box' }, lat, legend), h('div', { class: 'chart-box' }, kc)),
        p.unfinished
          ? h('p', { class: 'warning unfinished', text: `The last profile run on ${p.device_type} is ${p.unfinished.status} (${p.unfinished.message}); ${p.unfinished.fix} completes the profile.` })
          : null,
        p.borrowed
          ? h('p', { class: 'warning borrowed', text: `This file has no profile of its own on ${p.device_type} yet: it is placed with the profile of the file it replaced (sha256 ${p.borrowed.from_sha256.slice(0, 12)}) until ${p.borrowed.fix} measures it.` })
          : null,
      );
    });
    e.body.replaceChildren(...figs);
  }
}

// memoryWords says what the planner counts for one copy of the model on a
// device type and where that comes from (the profile's memory_mb and
// memory_source); '' from a daemon that does not say.
function memoryWords(p) {
  if (!p.memory_source) return '';
  return `; one copy needs ${Math.round(p.memory_mb)} MB (${p.memory_source})`;
}

// inputsWords says at which sizes the profile measured the model's dynamic
// input dimensions (its profile_shapes, as inputs_at gives them); '' when
// at 1 or not said.
function inputsWords(p) {
  if (!p.inputs_at) return '';
  return `; inputs measured at ${p.inputs_at}`;
}
