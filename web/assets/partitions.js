// The devices panel: every device drawn as a horizontal bar cut into its
// gpu-lets to scale (a block's width is its size, percent of the bar), with
// the models, batch, assigned rate, busy ratio, p99 against the SLO and the
// memory its executor holds.

import { h, s, num, rate, pct, ms, busy, bytes, attainment, worst, gradeWords, clock } from './dom.js';
import { fit, FONT, FONT_BOLD } from './text.js';

const LINE = 16; // text line height in a block, px
const PAD = 7; // inner padding of a block, px
const GAP = 2; // gap between blocks, px (taken from the block's own width)
const LANE_GAP = 6;

// deviceWord is how a label names a device of this kind.
function deviceWord(d) {
  return d.kind === 'cpu' ? 'CPU' : 'GPU';
}

const backendWords = { mps: 'MPS shares', mig: 'MIG instances', none: 'whole device', cpu: 'CPU core shares' };

// placementLabel says one model on a gpu-let in words.
function placementLabel(p, model) {
  const r = model ? model.recent : null;
  let out = `${p.name} batch ${p.batch} at ${rate(p.rate)} req/s`;
  if (r && r.requests > 0) {
    out += `, p99 ${ms(r.p99_ms)} ms of SLO ${num(p.slo_ms || model.slo_ms)} ms, ${pct(r.slo_attainment)} within SLO`;
  } else {
    out += `, SLO ${num(p.slo_ms || (model && model.slo_ms))} ms, no recent requests`;
  }
  return out;
}

// memoryShort is the memory a gpu-let's executor holds, in a block: its GPU
// memory where the driver lists it, else its resident memory; '' without a
// process.
function memoryShort(g) {
  const m = g.memory;
  if (!m) return '';
  return m.device_bytes > 0 ? `${bytes(m.device_bytes)} GPU` : bytes(m.host_bytes);
}

// memoryWords says it in full.
function memoryWords(g) {
  const m = g.memory;
  if (!m) return '';
  return m.device_bytes > 0
    ? `holds ${bytes(m.device_bytes)} of GPU memory and ${bytes(m.host_bytes)} of host memory`
    : `holds ${bytes(m.host_bytes)} of memory`;
}

// stateWords is a gpu-let's state as the page says it: with its
// executor's restarts, when a dead one is tried again (restarts back off,
// for minutes after an out-of-memory kill), and since when a stalled one
// has sent nothing (its requests go to other gpu-lets meanwhile).
export function stateWords(g) {
  let words = g.state;
  if (g.restarts > 0) words += ` (${g.restarts} restart${g.restarts === 1 ? '' : 's'})`;
  if (g.next_try) words += `, tried again at ${clock(g.next_try)}`;
  if (g.stalled_since) words += `: silent since ${clock(g.stalled_since)}, its requests sent elsewhere`;
  return words;
}

// gpuletLabel is the accessible name of a gpu-let block.
function gpuletLabel(d, g, models) {
  const what = g.models.length
    ? 'running ' + g.models.map((p) => placementLabel(p, models.get(p.name))).join('; and ')
    : 'with no models';
  const mem = memoryWords(g);
  return `${deviceWord(d)} ${d.id}: gpu-let ${g.size}% (${g.id}, ${stateWords(g)}) ${what}; busy ${busy(g.busy_ratio)}` + (mem ? `; ${mem}` : '');
}

// blockLines are the text lines of a gpu-let block: [text, font, class].
function blockLines(g, models) {
  const head = `${g.size}%` + (g.state !== 'ready' ? ` · ${g.state}` : '');
  const lines = [[head, FONT_BOLD, 'size']];
  for (const p of g.models) {
    const m = models.get(p.name);
    const r = m ? m.recent : null;
    lines.push([`${p.name} · b${p.batch} · ${rate(p.rate)}/s`, FONT_BOLD, 'model']);
    const slo = num(p.slo_ms || (m && m.slo_ms));
    lines.push([
      r && r.requests > 0 ? `p99 ${ms(r.p99_ms)}/${slo} ms · ${pct(r.slo_attainment)} in SLO` : `p99 –/${slo} ms`,
      FONT,
      'lat att-text-' + attainment(r),
    ]);
  }
  const mem = memoryShort(g);
  lines.push([`busy ${busy(g.busy_ratio)}` + (mem ? ` · ${mem}` : ''), FONT, 'busy']);
  return lines;
}

// block draws one gpu-let at x (px) in a lane of the given height.
function block(d, g, models, x, w, y, height, cut) {
  const grade = worst(g.models.map((p) => attainment((models.get(p.name) || {}).recent)));
  const label = gpuletLabel(d, g, models);
  const el = s('g', {
    class: `gpulet att-${grade} state-${g.state}`,
    role: 'img',
    tabindex: 0,
    'aria-label': label,
    'data-device': d.id,
    'data-gpulet': g.id,
    'data-size': g.size,
    'data-state': g.state,
    'data-models': g.models.map((p) => p.name).join(','),
    'data-grade': grade,
  });
  el.append(s('title', { text: `${label} (${gradeWords(grade)})` }));
  const inner = Math.max(0, w - GAP);
  el.append(s('rect', { class: 'block', x: x + GAP / 2, y, width: inner, height, rx: 4 }));
  const room = inner - 2 * PAD;
  let ty = y + PAD + 12;
  for (const [text, font, cls] of blockLines(g, models)) {
    const t = room > 0 ? fit(text, room, font) : '';
    if (t !== text) cut.any = true;
    if (t) el.append(s('text', { class: cls, x: x + GAP / 2 + PAD, y: ty, text: t }));
    ty += LINE;
  }
  return el;
}

// free draws the part of a device no gpu-let holds.
function freeBlock(size, x, w, y, height) {
  const el = s('g', { class: 'free', 'data-free': size });
  el.append(s('rect', { class: 'block', x: x + GAP / 2, y, width: Math.max(0, w - GAP), height, rx: 4 }));
  const t = fit(`free ${size}%`, w - GAP - 2 * PAD);
  if (t) el.append(s('text', { x: x + GAP / 2 + PAD, y: y + PAD + 12, text: t }));
  return el;
}

// bar draws a device's gpu-lets: the serving ones in the first lane, any
// that are draining after a reorganization in a second lane below.
// cut.any is set when a label did not fit its block.
function bar(d, gls, models, width, cut) {
  const serving = gls.filter((g) => g.state !== 'draining');
  const draining = gls.filter((g) => g.state === 'draining');
  const maxModels = Math.max(1, ...gls.map((g) => g.models.length));
  const laneH = 2 * PAD + LINE * (2 + 2 * maxModels) - 4;
  const lanes = draining.length ? 2 : 1;
  const height = lanes * laneH + (lanes - 1) * (LANE_GAP + LINE);
  const svg = s('svg', {
    class: 'bar',
    width,
    height,
    viewBox: `0 0 ${width} ${height}`,
    role: 'group',
    'aria-label': `${deviceWord(d)} ${d.id}, cut into ${serving.length} gpu-let${serving.length === 1 ? '' : 's'}`,
    'data-device': d.id,
    'data-width': width,
  });
  svg.append(s('rect', { class: 'track', x: 0, y: 0, width, height: laneH, rx: 5 }));
  let x = 0;
  let used = 0;
  for (const g of serving) {
    const w = (g.size / 100) * width;
    svg.append(block(d, g, models, x, w, 0, laneH, cut));
    x += w;
    used += g.size;
  }
  if (used < 100) svg.append(freeBlock(100 - used, x, width - x, 0, laneH));
  if (draining.length) {
    const y = laneH + LANE_GAP + LINE;
    svg.append(s('text', { class: 'lane-label', x: 0, y: y - 6, text: 'draining (retired by the last reorganization)' }));
    let dx = 0;
    for (const g of draining) {
      const w = (g.size / 100) * width;
      svg.append(block(d, g, models, dx, w, y, laneH, cut));
      dx += w;
    }
  }
  return svg;
}

// detailsList lists a device's gpu-lets and placements in full, in words
// that wrap: the blocks' own labels are cut where a block is narrow.
function detailsList(gls, models) {
  if (!gls.length) return h('p', { class: 'empty', text: 'No gpu-lets on this device.' });
  return h(
    'ul',
    { class: 'gl-list' },
    gls.map((g) =>
      h(
        'li',
        { 'data-gpulet': g.id },
        h('strong', { text: `${g.size}%` }),
        ` ${g.id} · ${stateWords(g)} · busy ${busy(g.busy_ratio)}` + (g.memory ? ` · ${memoryWords(g)}` : ''),
        g.models.length
          ? h(
              'ul',
              {},
              g.models.map((p) => {
                const m = models.get(p.name);
                const r = m ? m.recent : null;
                const seen = r && r.requests > 0;
                return h(
                  'li',
                  {},
                  h('span', { class: 'gl-model', text: p.name }),
                  ` batch ${p.batch} · ${rate(p.rate)} req/s assigned` +
                    (p.mean_batch > 0 ? ` · mean batch ${num(p.mean_batch)}` : '') +
                    (p.failed > 0 ? ` · ${num(p.failed)} failed here` : '') +
                    (p.slow_batches ? ` · batches ${p.batch_time_factor.toFixed(1)}× their profiled time` : '') +
                    ` · planned worst ${ms(p.worst_ms)} ms · `,
                  h('span', {
                    class: `att-text-${attainment(r)}`,
                    text: seen ? `p99 ${ms(r.p99_ms)} of ${num(m.slo_ms)} ms, ${pct(r.slo_attainment)} in SLO` : `SLO ${num(p.slo_ms)} ms, no recent requests`,
                  }),
                );
              }),
            )
          : ' · no models',
      ),
    ),
  );
}

// planMemory is the memory the plan puts on a device, in MiB, and its total.
function planMemory(plan, id) {
  const g = plan && plan.gpus ? plan.gpus.find((x) => x.id === id) : null;
  return g ? [g.memory_used_mb, g.memory_mb] : [0, 0];
}

// cpuCores says how many cores the CPU device holds and, where its
// cgroup's CPU limit narrowed them, of how many; null for other devices.
export function cpuCores(d) {
  if (d.kind !== 'cpu' || !d.cores) return null;
  const n = d.cores.length;
  if (d.cpu_limit > 0) return `${n} of ${d.online_cores} cores: the CPU limit of ${d.cpu_limit} CPUs pays for ${n}`;
  return `${n} core${n === 1 ? '' : 's'}`;
}

// powerWords is a GPU's power draw, and of what limit, as the driver
// reports it; null for a device without one.
export function powerWords(d) {
  if (!d.power) return null;
  const limit = d.power.limit_watts > 0 ? ` of ${num(d.power.limit_watts)} W` : '';
  return `drawing ${num(d.power.watts)} W${limit}`;
}

// Devices renders the devices panel and keeps what the reader opened.
export class Devices {
  constructor(root) {
    this.root = root;
    // The reader's choice to open or close a device's details; without
    // one, details are open when a block's label had to be cut.
    this.userOpen = new Map();
    this.status = null;
    this.lastWidth = 0;
    new ResizeObserver(() => {
      const w = this.root.clientWidth;
      if (this.status && w !== this.lastWidth) this.render(this.status);
    }).observe(root);
  }

  render(status) {
    this.status = status;
    this.lastWidth = this.root.clientWidth;
    const focused = document.activeElement && document.activeElement.getAttribute ? document.activeElement.getAttribute('data-gpulet') : null;
    const models = new Map((status.models || []).map((m) => [m.name, m]));
    const wraps = [];
    const articles = (status.devices || []).map((d) => {
      const gls = (status.gpulets || []).filter((g) => g.device === d.id);
      const serving = gls.filter((g) => g.state !== 'draining');
      const used = serving.reduce((a, g) => a + g.size, 0);
      const [memUsed, memTotal] = planMemory(status.plan, d.id);
      const wrap = h('div', { class: 'bar-wrap' });
      const summary = h('summary', { text: `gpu-let details (${gls.length})` });
      const details = h('details', { class: 'gl-details', 'data-device': d.id }, summary, detailsList(gls, models));
      summary.addEventListener('click', () => this.userOpen.set(d.id, !details.open));
      wraps.push([wrap, d, gls, details]);
      const hid = 'dev-' + d.id.replace(/[^A-Za-z0-9_-]/g, '_');
      return h(
        'article',
        { class: 'device', 'data-device': d.id, 'data-type': d.type, 'aria-labelledby': hid },
        h('h3', { id: hid }, h('span', { class: 'dev-id', text: d.id }), ' ', h('span', { class: 'dev-name', text: d.name })),
        h(
          'p',
          { class: 'dev-meta' },
          [
            `${d.type}`,
            backendWords[d.backend] || d.backend,
            `${used}% in ${serving.length} gpu-let${serving.length === 1 ? '' : 's'}`,
            memTotal > 0 ? `memory ${num(memUsed / 1024)} of ${num(memTotal / 1024)} GiB planned` : `memory ${bytes(d.memory_total)}`,
            // What the driver says is in use, on a GPU it measures; what
            // the executors' loads hold, on an emulated one.
            (d.kind === 'nvidia' || d.kind === 'emulated') && d.memory_total > 0 ? `${bytes(d.memory_total - Math.min(d.memory_free, d.memory_total))} in use` : null,
            powerWords(d),
            cpuCores(d),
            d.health && d.health !== 'ok' ? `health: ${d.health}${d.health_detail ? ` (${d.health_detail})` : ''}` : null,
            d.mig && d.mig.instances && d.mig.instances.length
              ? 'MIG ' + d.mig.instances.map((i) => `${i.profile}${i.leased ? ' (' + i.leased + '% leased' + (i.mps_pipe_dir ? ', MPS' : '') + ')' : ''}`).join(', ')
              : null,
          ]
            .filter(Boolean)
            .join(' · '),
        ),
        wrap,
        details,
      );
    });
    this.root.replaceChildren(...articles);
    this.root.dataset.planAt = status.plan_at || '';
    this.root.dataset.reorganizations = String(status.reorganizations);
    for (const [wrap, d, gls, details] of wraps) {
      const width = Math.max(120, Math.floor(wrap.clientWidth));
      const cut = { any: false };
      wrap.append(bar(d, gls, models, width, cut));
      details.open = this.userOpen.has(d.id) ? this.userOpen.get(d.id) : cut.any;
    }
    if (focused) {
      const el = this.root.querySelector(`g[data-gpulet="${CSS.escape(focused)}"]`);
      if (el) el.focus({ preventScroll: true });
    }
  }
}
