/**
 * The y range of a health sparkline (no axes, 56 px high): the values' span with a sixth of it above and below,
 * so the highest and lowest points and their dots are drawn whole, not cut in half by the canvas edge. A flat
 * series (a replica delay that is always 0) has no span: it is drawn across the middle, with room on both sides.
 */
export function sparklineRange(min: number | null, max: number | null): [number, number] {
  if (min === null || max === null || !Number.isFinite(min) || !Number.isFinite(max)) return [0, 1];
  const span = max - min;
  const pad = span > 0 ? span / 6 : Math.abs(min) / 2 || 1;
  return [min - pad, max + pad];
}
