// Measuring and fitting SVG text: labels inside a gpu-let block are cut to
// its width with an ellipsis, so a narrow block never spills into the next.

const canvas = document.createElement('canvas');
const ctx = canvas.getContext('2d');

// FONT matches the CSS of text in the bars (style.css: .bar text).
export const FONT = '12px system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif';
export const FONT_BOLD = 'bold ' + FONT;

// width is the rendered width of str in font, in CSS pixels.
export function width(str, font = FONT) {
  ctx.font = font;
  return ctx.measureText(str).width;
}

// fit returns str, or its longest prefix with '…' that is at most max
// pixels wide, or '' when not even one character and the ellipsis fit.
export function fit(str, max, font = FONT) {
  if (width(str, font) <= max) return str;
  let lo = 0;
  let hi = str.length;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (width(str.slice(0, mid) + '…', font) <= max) lo = mid;
    else hi = mid - 1;
  }
  return lo === 0 ? '' : str.slice(0, lo).trimEnd() + '…';
}
