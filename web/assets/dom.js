// DOM building and number formatting shared by the page's modules.

export const SVG_NS = 'http://www.w3.org/2000/svg';

function build(el, attrs, children) {
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'text') el.textContent = String(v);
    else if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

// h makes an HTML element: h('td', {class: 'num'}, 'text', child).
export function h(tag, attrs, ...children) {
  return build(document.createElement(tag), attrs, children);
}

// s makes an SVG element.
export function s(tag, attrs, ...children) {
  return build(document.createElementNS(SVG_NS, tag), attrs, children);
}

// num formats a number with at most `digits` significant digits after a
// leading integer part; '–' for a missing value.
export function num(x, digits = 3) {
  if (x === undefined || x === null || !Number.isFinite(x)) return '–';
  if (x === 0) return '0';
  const a = Math.abs(x);
  if (a >= 10 ** digits) return Math.round(x).toLocaleString('en-US');
  return Number(x.toPrecision(digits)).toLocaleString('en-US', { maximumFractionDigits: 6 });
}

// ms formats milliseconds.
export function ms(x) {
  return x > 0 ? num(x, 3) : '–';
}

// rate formats requests per second.
export function rate(x) {
  if (!(x > 0)) return '0';
  return x >= 100 ? Math.round(x).toLocaleString('en-US') : num(x, 3);
}

// pct formats a share in [0, 1] as a percentage: one decimal below 10%
// and from 90% on (2.7%, 98.9%), whole numbers between. From 10% on it
// rounds down, never up, so that no number passes a grade's bound
// (attainment): an SLO attainment of 98.96% reads 98.9% in the colour of
// 90–99%, not 99%, and none reads 100% short of it.
export function pct(x) {
  if (x === undefined || x === null || !Number.isFinite(x)) return '–';
  const p = x * 100;
  if (p <= 0 || p >= 100) return Math.round(p) + '%';
  if (p < 10) return p.toFixed(1) + '%';
  // The epsilon keeps x*100's binary error (0.29 → 28.999…) from rounding
  // a whole percentage down.
  if (p >= 90) return (Math.floor(p * 10 + 1e-6) / 10).toFixed(1) + '%';
  return Math.floor(p + 1e-6) + '%';
}

// busy formats a gpu-let's busy ratio; '–' when the executor reports a
// value outside [0, 1], which no real busy share can be.
export function busy(x) {
  return Number.isFinite(x) && x >= 0 && x <= 1 ? pct(x) : '–';
}

// bytes formats a byte count in the largest of GiB, MiB and KiB it holds
// one of (a request's 3.9 KiB, not 0.00381 MiB), else in bytes.
export function bytes(b) {
  if (!(b > 0)) return '–';
  for (const [unit, size] of [['GiB', 2 ** 30], ['MiB', 2 ** 20], ['KiB', 2 ** 10]]) {
    if (b >= size) return num(b / size, 3) + ' ' + unit;
  }
  return Math.round(b) + ' B';
}

// attainment grades a model's recent window: 'idle' without requests,
// then good (≥ 99% within SLO), warn (≥ 90%) or bad.
export function attainment(recent) {
  if (!recent || !(recent.requests > 0)) return 'idle';
  const a = recent.slo_attainment;
  if (a >= 0.99) return 'good';
  if (a >= 0.9) return 'warn';
  return 'bad';
}

const gradeOrder = { idle: 0, good: 1, warn: 2, bad: 3 };

// worst returns the worst of several grades.
export function worst(grades) {
  let w = 'idle';
  for (const g of grades) if (gradeOrder[g] > gradeOrder[w]) w = g;
  return w;
}

// gradeWords says a grade in words for labels.
export function gradeWords(g) {
  return { idle: 'no recent requests', good: 'meeting the SLO', warn: 'missing the SLO for some requests', bad: 'missing the SLO' }[g];
}

// time formats an ISO time as the local clock time.
export function clock(iso) {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime()) || d.getFullYear() < 2000) return '–';
  return d.toLocaleTimeString('en-GB', { hour12: false });
}

// cssIdent makes a string safe inside an id attribute.
export function cssIdent(x) {
  return String(x).replace(/[^A-Za-z0-9_-]/g, '_');
}
