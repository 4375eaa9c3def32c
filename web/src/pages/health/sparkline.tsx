/** A component's observed values over 24 h, drawn with uPlot (small, canvas-based). */
import { useEffect, useRef } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { sparklineRange } from './sparkline-range.js';

export function Sparkline({
  points,
  unit,
  label,
}: {
  points: { at: string; value: number | null }[];
  unit: string;
  label: string;
}) {
  const host = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = host.current;
    if (!el) return;
    const ordered = [...points].filter((p) => p.value !== null).reverse();
    if (ordered.length < 2) return;
    const xs = ordered.map((p) => Date.parse(p.at) / 1000);
    const ys = ordered.map((p) => p.value as number);
    const stroke = getComputedStyle(el).getPropertyValue('--primary').trim() || '#2563eb';
    const plot = new uPlot(
      {
        width: Math.max(160, el.clientWidth),
        height: 56,
        legend: { show: false },
        cursor: { show: false },
        axes: [{ show: false }, { show: false }],
        // Room for the first and last dots, which sit on the left and right edges.
        padding: [0, 4, 0, 4],
        // Every point inside the canvas, a flat series across the middle (uPlot's own range put a constant 0 on
        // the bottom edge, half cut off).
        scales: { x: { time: true }, y: { range: (_u, min, max) => sparklineRange(min, max) } },
        series: [{}, { stroke, width: 1.5, label: unit }],
      },
      [xs, ys],
      el,
    );
    const resize = new ResizeObserver(() => plot.setSize({ width: Math.max(160, el.clientWidth), height: 56 }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [points, unit]);
  return (
    <div ref={host} className="sparkline" role="img" aria-label={`${label}: observed ${unit} over the last 24 hours`} />
  );
}
