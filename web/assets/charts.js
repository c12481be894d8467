// Small SVG line charts: axes with round ticks, and the two charts of a
// model's profile (latency against batch per size, affordable rate against
// size), each with the knee marked.

import { s, h, num, rate } from './dom.js';
import { width, FONT_BOLD } from './text.js';

const M = { l: 50, r: 14, t: 14, b: 40 }; // margins, px; the left one grows with the ticks
const TICK_FONT = '11px system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif'; // style.css: .chart text
const Y_LABEL_ROOM = 20; // px left of the y ticks for the rotated axis label (12px, centred at x = 12)
const TICK_GAP = 6; // px between a y tick's text and the axis
let clipSeq = 0;

// ticks returns round values covering [0, max], about n of them.
export function ticks(max, n = 5) {
  if (!(max > 0)) return [0, 1];
  const raw = max / n;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((f) => f * mag).find((st) => st >= raw) || 10 * mag;
  const out = [];
  for (let v = 0; v <= max + step * 1e-9; v += step) out.push(Number(v.toPrecision(12)));
  if (out[out.length - 1] < max) out.push(Number((out[out.length - 1] + step).toPrecision(12)));
  return out;
}

// frame draws a chart's axes over x in [x0, x1] and y in [0, the last of
// ys] and returns the scales, the plot group and the plot's left edge l:
// the left margin is as wide as the widest y tick needs, so that a rate of
// 800,000 does not run under the axis label.
function frame(svg, w, ht, [x0, x1], xs, ys, xLabel, yLabel) {
  const l = Math.max(M.l, Math.ceil(Y_LABEL_ROOM + TICK_GAP + Math.max(...ys.map((v) => width(num(v), TICK_FONT)))));
  const pw = w - l - M.r;
  const ph = ht - M.t - M.b;
  const y1 = ys[ys.length - 1];
  const X = (v) => l + ((v - x0) / (x1 - x0 || 1)) * pw;
  const Y = (v) => M.t + ph - (v / (y1 || 1)) * ph;
  const axes = s('g', { class: 'axes', 'aria-hidden': 'true' });
  for (const v of ys) {
    axes.append(s('line', { class: 'grid', x1: l, x2: l + pw, y1: Y(v), y2: Y(v) }));
    axes.append(s('text', { class: 'tick', x: l - TICK_GAP, y: Y(v) + 4, 'text-anchor': 'end', text: num(v) }));
  }
  for (const v of xs) {
    axes.append(s('line', { class: 'tickmark', x1: X(v), x2: X(v), y1: M.t + ph, y2: M.t + ph + 4 }));
    axes.append(s('text', { class: 'tick', x: X(v), y: M.t + ph + 16, 'text-anchor': 'middle', text: num(v) }));
  }
  axes.append(s('line', { class: 'axis', x1: l, x2: l + pw, y1: M.t + ph, y2: M.t + ph }));
  axes.append(s('line', { class: 'axis', x1: l, x2: l, y1: M.t, y2: M.t + ph }));
  axes.append(s('text', { class: 'axis-label', x: l + pw / 2, y: ht - 6, 'text-anchor': 'middle', text: xLabel }));
  axes.append(s('text', { class: 'axis-label', x: 12, y: M.t + ph / 2, 'text-anchor': 'middle', transform: `rotate(-90 12 ${M.t + ph / 2})`, text: yLabel }));
  svg.append(axes);
  const id = 'clip' + ++clipSeq;
  svg.append(s('defs', {}, s('clipPath', { id }, s('rect', { x: l, y: M.t - 2, width: pw, height: ph + 2 }))));
  const plot = s('g', { 'clip-path': `url(#${id})` });
  svg.append(plot);
  return { X, Y, plot, l, pw, ph };
}

// tag labels the point (cx, cy) with text on a white plate, to its right
// (or left where the right has no room), above or below it as preferred,
// kept inside the plot area.
function tag(svg, f, cx, cy, text, below = false) {
  const tw = width(text, FONT_BOLD) + 8;
  const th = 18;
  let x = cx + 8;
  if (x + tw > f.l + f.pw) x = cx - 8 - tw;
  x = Math.max(f.l + 2, Math.min(x, f.l + f.pw - tw));
  let y = below ? cy + 10 : cy - 10 - th;
  if (y < M.t) y = cy + 10;
  if (y + th > M.t + f.ph) y = cy - 10 - th;
  const g = s('g', { class: 'knee-tag' });
  g.append(s('rect', { x, y, width: tw, height: th, rx: 3 }));
  g.append(s('text', { class: 'knee-label', x: x + 4, y: y + 13, text }));
  svg.append(g);
}

function path(pts) {
  return pts.map(([x, y], i) => `${i ? 'L' : 'M'}${x.toFixed(1)},${y.toFixed(1)}`).join('');
}

// latencyChart draws p50 latency against batch, one line per size; the
// knee size's line is drawn heavier with its chosen batch marked, and a
// dashed line shows the batch budget SLO/2 (a batch must keep 2·L ≤ SLO).
export function latencyChart(model, doc, sloMS, w, ht = 250) {
  const bySize = new Map();
  for (const p of doc.points) {
    if (!bySize.has(p.size)) bySize.set(p.size, []);
    bySize.get(p.size).push(p);
  }
  const sizes = [...bySize.keys()].sort((a, b) => a - b);
  for (const pts of bySize.values()) pts.sort((a, b) => a.batch - b.batch);
  const maxB = Math.max(1, ...doc.points.map((p) => p.batch));
  const maxL = Math.max(0, ...doc.points.map((p) => p.p50_ms));
  const top = Math.min(maxL, sloMS > 0 ? sloMS : maxL) * 1.05 || 1;
  const kneeSize = doc.knee ? doc.knee.knee : 0;
  const kp = doc.knee ? doc.knee.points.find((p) => p.size === kneeSize) : null;
  const kneeBatch = kp ? kp.batch : 0;
  const svg = s('svg', {
    class: 'chart',
    width: w,
    height: ht,
    viewBox: `0 0 ${w} ${ht}`,
    role: 'img',
    'data-chart': 'latency',
    'data-device-type': doc.device_type,
    'data-knee': kneeSize || '',
    'data-sizes': sizes.join(','),
    'aria-label':
      `p50 latency of ${model} on ${doc.device_type} against batch size for gpu-let sizes ${sizes.map((x) => x + '%').join(', ')}; ` +
      `SLO ${num(sloMS)} ms, so a batch may take at most ${num(sloMS / 2)} ms` +
      (kneeSize ? `; knee at ${kneeSize}% with batch ${kneeBatch}` : '; no knee: no size meets the SLO'),
  });
  const xt = [1, ...ticks(maxB, Math.min(6, maxB)).filter((v) => v > 1 && v <= maxB)];
  const f = frame(svg, w, ht, [0, maxB], xt, ticks(top, 4), 'batch size', 'p50 latency (ms)');
  if (sloMS / 2 <= top * 1.2) {
    f.plot.append(s('line', { class: 'budget', x1: f.l, x2: f.l + f.pw, y1: f.Y(sloMS / 2), y2: f.Y(sloMS / 2) }));
    svg.append(s('text', { class: 'budget-label', x: f.l + f.pw - 4, y: Math.max(M.t + 10, f.Y(sloMS / 2) - 4), 'text-anchor': 'end', text: `SLO/2 = ${num(sloMS / 2)} ms` }));
  }
  sizes.forEach((size, i) => {
    const pts = bySize.get(size).map((p) => [f.X(p.batch), f.Y(p.p50_ms)]);
    const cls = `series s${i % 8}${size === kneeSize ? ' knee' : ''}`;
    f.plot.append(s('path', { class: cls, d: path(pts), 'data-size': size }));
    if (pts.length === 1) f.plot.append(s('circle', { class: cls + ' single', cx: pts[0][0], cy: pts[0][1], r: 3 }));
  });
  if (kneeSize && kneeBatch) {
    const p = bySize.get(kneeSize)?.find((q) => q.batch === kneeBatch);
    if (p) {
      const cx = f.X(p.batch);
      const cy = f.Y(p.p50_ms);
      svg.append(s('circle', { class: 'knee-dot', cx, cy, r: 5, 'data-knee-size': kneeSize, 'data-knee-batch': kneeBatch }));
      // Below: the knee's batch sits just under the SLO/2 line drawn above it.
      tag(svg, f, cx, cy, `knee ${kneeSize}% · batch ${kneeBatch}`, true);
    }
  }
  const legend = h(
    'ul',
    { class: 'series-legend', 'aria-label': 'gpu-let sizes' },
    sizes.map((size, i) => h('li', { class: size === kneeSize ? 'is-knee' : null }, h('span', { class: `sw sw${i % 8}`, 'aria-hidden': 'true' }), `${size}%${size === kneeSize ? ' (knee)' : ''}`)),
  );
  return [svg, legend];
}

// kneeChart draws the affordable rate (largest b/L with 2·L ≤ SLO) against
// gpu-let size, from the origin, with the knee marked.
export function kneeChart(model, doc, w, ht = 250) {
  const pts = doc.knee ? doc.knee.points : [];
  const kneeSize = doc.knee ? doc.knee.knee : 0;
  const maxR = Math.max(0, ...pts.map((p) => p.rate));
  const k = pts.find((p) => p.size === kneeSize);
  const svg = s('svg', {
    class: 'chart',
    width: w,
    height: ht,
    viewBox: `0 0 ${w} ${ht}`,
    role: 'img',
    'data-chart': 'knee',
    'data-device-type': doc.device_type,
    'data-knee': kneeSize || '',
    'aria-label':
      `Affordable rate of ${model} on ${doc.device_type} against gpu-let size: ` +
      pts.map((p) => `${p.size}% ${rate(p.rate)} req/s`).join(', ') +
      (k ? `; knee at ${kneeSize}% (${rate(k.rate)} req/s at batch ${k.batch})` : ''),
  });
  const f = frame(svg, w, ht, [0, 100], [0, 20, 40, 60, 80, 100], ticks(maxR || 1, 4), 'gpu-let size (%)', 'affordable rate (req/s)');
  const line = [[f.X(0), f.Y(0)], ...pts.map((p) => [f.X(p.size), f.Y(p.rate)])];
  f.plot.append(s('path', { class: 'series s0', d: path(line) }));
  for (const p of pts) {
    f.plot.append(s('circle', { class: 'pt', cx: f.X(p.size), cy: f.Y(p.rate), r: 3 }));
  }
  if (k) {
    const cx = f.X(k.size);
    const cy = f.Y(k.rate);
    svg.append(s('circle', { class: 'knee-dot', cx, cy, r: 6, 'data-knee-size': kneeSize }));
    tag(svg, f, cx, cy, `knee ${kneeSize}% · ${rate(k.rate)} req/s`);
  }
  return svg;
}
