// The models table: rate, SLO (and whether it is the server's default),
// attainment, p50/p99, mean batch, violations and where each model is
// placed; configuration fields that took no effect, the response cache's
// hits, live sequences, custom operators and priority levels are listed on
// the name, what keeps a model from serving its requests (gpu-lets where a
// batch of one is predicted past the SLO, a smallest request above
// limits.max_request_body) on the placement.

import { h, num, rate, pct, ms, attainment, cssIdent } from './dom.js';

// sequencesNote says on a stateful model's name how many sequences are
// live, and in its title what gpuletd keeps for them; null for another model.
export function sequencesNote(s) {
  if (!s) {
    return null;
  }
  const fills = [...(s.controls || []), ...(s.states || [])];
  return h('span', {
    class: 'config-notes',
    text: ` (${num(s.live)} sequence${s.live === 1 ? '' : 's'})`,
    title:
      `stateful (sequence_batching): ${s.live} live of at most ${s.max}, each ended after ${s.idle_ms / 1000} s idle` +
      (fills.length ? `; gpuletd fills ${fills.join(', ')}` : ''),
  });
}

// runtimeNote says on a model's name that ONNX Runtime opens it with
// custom operators (or fewer graph optimizations), and in its title which
// libraries; null for another model.
export function runtimeNote(r) {
  if (!r) {
    return null;
  }
  const libs = r.op_libraries || [];
  const parts = [];
  if (libs.length) {
    parts.push(`custom operators from ${libs.join(', ')}`);
  }
  if (r.graph_optimization) {
    parts.push(`${r.graph_optimization} graph optimizations only`);
  }
  return h('span', {
    class: 'config-notes',
    text: libs.length ? ' (custom ops)' : ` (${r.graph_optimization} graph)`,
    title: `onnxruntime: ${parts.join('; ')}`,
  });
}

// priorityNote says on a model's name how many priority levels its
// requests may ask for, and in its title what they do; null for a model
// without levels.
export function priorityNote(m) {
  if (!(m.priority_levels > 1)) {
    return null;
  }
  return h('span', {
    class: 'config-notes',
    text: ` (${m.priority_levels} levels)`,
    title:
      `priority levels: ${m.priority_levels}, 1 the highest; a request that names none is at level ${m.default_priority_level}; ` +
      'at overload the lower levels give way (shed_priority)',
  });
}

// cacheNote says, on a model or pipeline that enables the response cache,
// how many requests it answered, or why it is off.
export function cacheNote(c) {
  if (!c) {
    return null;
  }
  if (c.off) {
    return h('span', { class: 'config-notes', text: ' (cache off)', title: `response cache enabled, but off: ${c.off}` });
  }
  return h('span', {
    class: 'config-notes',
    text: ` (${num(c.hits)} cached)`,
    title:
      `response cache: ${c.hits} hits, ${c.misses} misses` +
      (c.rate > 0 ? `; ${rate(c.rate)}/s now, outside the model's rate (no gpu-let runs them)` : ''),
  });
}

// extraHeadroomNote says that the miss rule plans a model with more
// headroom than the node's (extra_headroom), and why, in its title.
export function extraHeadroomNote(extra) {
  if (!(extra > 0)) {
    return null;
  }
  const pct = Math.round(100 * extra);
  return h('span', {
    class: 'extra-headroom',
    text: ` (+${pct}% room)`,
    title: `planned with ${pct}% more headroom: it missed its SLO on a plan that held none of its load back (this fades while it stays within)`,
  });
}

// warningNote says what keeps a model or pipeline from serving its
// requests: each warning's text before its first colon (what happens), the
// whole of them (with the numbers) in its title.
export function warningNote(warnings) {
  if (!warnings || !warnings.length) {
    return null;
  }
  const clauses = warnings.map((w) => (w.includes(':') ? w.slice(0, w.indexOf(':')) : w));
  return h('span', { class: 'warning', text: ` (${clauses.join('; ')})`, title: warnings.join('\n') });
}

// renderModels fills the table body from the status. A model's row and
// its name's cell stay the same elements from one refresh to the next
// (the cell is replaced only when what it says changed, the row moved only
// when it is out of place): a click on the name's link whose press and
// release straddle a refresh would otherwise land on a detached element
// and be lost.
export function renderModels(tbody, status) {
  const unscheduled = (status.plan && status.plan.unscheduled) || {};
  const rows = (status.models || []).map((m) => {
    const r = m.recent || {};
    const grade = attainment(r);
    const seen = r.requests > 0;
    const un = unscheduled[m.name];
    const notes = m.config_notes || [];
    return [
      m.name,
      h(
        'th',
        { scope: 'row' },
        h('a', { href: '#profile-' + cssIdent(m.name), text: m.name, title: `L(b,p) of ${m.name}` }),
        notes.length
          ? h('span', { class: 'config-notes', text: ` (${notes.length} ignored)`, title: notes.join('\n') })
          : null,
        cacheNote(m.response_cache),
        sequencesNote(m.sequences),
        runtimeNote(m.onnxruntime),
        priorityNote(m),
      ),
      h('td', { class: m.ready ? 'ok' : 'no', text: m.ready ? 'yes' : 'no', title: m.reason || '' }),
      h('td', { class: 'num', text: rate(m.rate) }),
      h(
        'td',
        { class: 'num' },
        rate(m.assigned_rate),
        un !== undefined ? h('span', { class: 'unscheduled', text: ` (+${rate(un)} unplaced)` }) : null,
        extraHeadroomNote(m.extra_headroom),
      ),
      h(
        'td',
        { class: 'num', title: m.slo_from ? `SLO from ${m.slo_from}` : '' },
        m.slo_ms ? num(m.slo_ms) : '–',
        m.slo_from === 'default_slo' ? h('span', { class: 'slo-default', text: ' default' }) : null,
      ),
      h('td', { class: 'num' }, h('span', { class: `badge att-${grade}`, text: seen ? pct(r.slo_attainment) : '–' })),
      h('td', { class: 'num', text: seen ? ms(r.p50_ms) : '–' }),
      h('td', { class: `num${seen && r.p99_ms > m.slo_ms ? ' over' : ''}`, text: seen ? ms(r.p99_ms) : '–' }),
      h('td', { class: 'num', text: r.mean_batch > 0 ? num(r.mean_batch) : '–' }),
      h('td', { class: 'num', text: seen ? String(r.violations) : '–' }),
      h('td', { class: 'num', text: String(r.requests || 0) }),
      h(
        'td',
        { class: 'placed' },
        m.placed_on && m.placed_on.length ? m.placed_on.join(', ') : m.reason ? 'not served: ' + m.reason : 'not placed',
        warningNote(m.warnings),
      ),
    ];
  });
  if (!rows.length) {
    tbody.replaceChildren(h('tr', {}, h('td', { colspan: 12, class: 'empty', text: 'No models are served.' })));
    return;
  }
  const old = new Map();
  for (const tr of tbody.children) {
    if (tr.dataset.model !== undefined) old.set(tr.dataset.model, tr);
  }
  rows.forEach(([name, th, ...tds], i) => {
    let tr = old.get(name);
    if (tr) {
      const head = tr.firstElementChild;
      while (tr.lastElementChild && tr.lastElementChild !== head) tr.lastElementChild.remove();
      if (!head || !head.isEqualNode(th)) {
        tr.replaceChildren(th);
      }
      tr.append(...tds);
    } else {
      tr = h('tr', { 'data-model': name }, th, ...tds);
    }
    const at = tbody.children[i];
    if (at !== tr) tbody.insertBefore(tr, at ?? null);
  });
  while (tbody.children.length > rows.length) tbody.lastElementChild.remove();
}
