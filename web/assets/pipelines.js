// The pipelines table: each pipeline's steps (the fan-out marked), its
// rate, the accuracy it serves at (accuracy scaling), its SLO and its
// recent end-to-end latency and attainment, the answers its response
// cache gave, what its configuration notes and what keeps it from serving
// its requests.

import { h, num, rate, pct, ms, attainment } from './dom.js';
import { cacheNote, warningNote } from './models.js';

// renderPipelines fills the table body from the status.
export function renderPipelines(tbody, status) {
  const rows = (status.pipelines || []).map((p) => {
    const r = p.recent || {};
    const seen = r.requests > 0;
    // A step that runs at once with the one before it is joined by "+".
    const join = (i) => (i === 0 ? '' : (p.beside || [])[i] ? ' + ' : ' → ');
    const steps = (p.steps || []).map((s, i) => join(i) + s).join('') + fanoutNote(p);
    return h(
      'tr',
      { 'data-pipeline': p.name },
      h('th', { scope: 'row' }, p.name, cacheNote(p.response_cache), configNotes(p.config_notes)),
      h('td', { class: p.ready ? 'ok' : 'no', text: p.ready ? 'yes' : 'no', title: p.reason || '' }),
      h('td', { class: 'steps', title: p.reason || '' }, steps, warningNote(p.warnings)),
      h('td', { class: 'num', text: rate(p.rate) }),
      accuracyCell(p.scaling || {}),
      h('td', { class: 'num', text: num(p.slo_ms) }),
      h('td', { class: 'num' }, h('span', { class: `badge att-${attainment(r)}`, text: seen ? pct(r.slo_attainment) : '–' })),
      h('td', { class: 'num', text: seen ? ms(r.p50_ms) : '–' }),
      h('td', { class: `num${seen && r.p99_ms > p.slo_ms ? ' over' : ''}`, text: seen ? ms(r.p99_ms) : '–' }),
      h('td', { class: 'num', text: seen ? String(r.violations) : '–' }),
      h('td', { class: 'num', text: String(r.requests || 0) }),
    );
  });
  if (!rows.length) {
    rows.push(h('tr', {}, h('td', { colspan: 11, class: 'empty', text: 'No pipelines are served.' })));
  }
  tbody.replaceChildren(...rows);
}

// configNotes counts what its configuration says of itself (fields that
// took no effect, steps that run a pipeline of their own), the notes in
// its title; null for none.
function configNotes(notes) {
  if (!notes || !notes.length) {
    return null;
  }
  const text = ` (${notes.length} ${notes.length === 1 ? 'note' : 'notes'})`;
  return h('span', { class: 'config-notes', 'data-notes': '', text, title: notes.join('\n') });
}

// fanoutNote names a pipeline's fan-out and its mean rows lately.
function fanoutNote(p) {
  if (!p.fanout) {
    return '';
  }
  const rows = p.fanout_rows > 0 ? `; ${p.fanout_rows.toFixed(1)} rows a request lately` : '';
  return ` (each row of ${p.fanout} its own request${rows})`;
}

// accuracyCell shows the recent accuracy of the requests served (one
// decimal: a point of accuracy matters); its title the plan's mode,
// expected accuracy and each step's variant mix.
function accuracyCell(sc) {
  const acc = (x) => `${(100 * x).toFixed(1)}%`;
  const mix = (sc.mix || [])
    .map((step) => step.map((v) => `${v.model} ${pct(v.share)}`).join(' + '))
    .join('; ');
  const title = sc.scaling
    ? `${sc.scaling} scaling, expected ${acc(sc.planned_accuracy)}: ${mix}; ${sc.rerouted} step requests rerouted`
    : 'not planned yet';
  return h('td', { class: 'num', 'data-scaling': sc.scaling || '', title, text: sc.served > 0 ? acc(sc.accuracy) : '–' });
}
