// The Health page's sparklines have no axes and are 56 px high: every value is drawn inside the chart, a flat
// series (a replica delay that is always 0) across the middle rather than on the bottom edge, half cut off.
import { describe, expect, it } from 'vitest';
import { sparklineRange } from '../web/src/pages/health/sparkline-range.js';

/** Where a value sits in the range: 0 at the bottom edge, 1 at the top. */
const position = (value: number, [min, max]: [number, number]) => (value - min) / (max - min);

describe('sparklineRange', () => {
  it('puts a flat series strictly inside, across the middle, whatever its value', () => {
    for (const value of [0, 1, 250, -3, 0.004]) {
      const range = sparklineRange(value, value);
      expect(range[0]).toBeLessThan(value);
      expect(range[1]).toBeGreaterThan(value);
      expect(position(value, range)).toBeCloseTo(0.5);
    }
  });

  it('keeps the lowest and highest values off the edges', () => {
    for (const [min, max] of [
      [0, 3],
      [4.5, 15.7],
      [-2, 2],
      [0.99, 1],
    ]) {
      const range = sparklineRange(min, max);
      expect(position(min, range)).toBeGreaterThanOrEqual(0.1);
      expect(position(max, range)).toBeLessThanOrEqual(0.9);
    }
  });

  it('has a range (not a point) when there is nothing to draw', () => {
    expect(sparklineRange(null, null)).toEqual([0, 1]);
  });
});
