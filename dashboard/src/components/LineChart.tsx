import { useEffect, useRef } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { valueRangeTop, type LineSeries } from './chart-scale';

export type { LineSeries };

const PALETTE = ['#1f5fbf', '#b3261e', '#1b7a3a', '#8a4fbf', '#a15c00', '#00707a', '#5a5a5a'];

/** A color for the nth series, readable on white. */
export function seriesColor(index: number): string {
  return PALETTE[index % PALETTE.length];
}

/**
 * A time series chart (uPlot) sized to its container; `times` in seconds. The time axis spans
 * `window` (the range chosen) whatever the data covers; the value axis follows the data, not
 * reference lines. The caption and a summary sentence carry the figures for people who cannot
 * see the canvas.
 */
export function LineChart({
  title,
  times,
  series,
  summary,
  window,
  height = 220,
}: {
  title: string;
  times: number[];
  series: LineSeries[];
  summary?: string;
  /** [from, to] in seconds: the time axis, so one point of data still shows the whole window. */
  window?: [number, number];
  height?: number;
}) {
  const holder = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = holder.current;
    if (!element) return;
    const width = () => Math.max(280, element.clientWidth);
    const plot = new uPlot(
      {
        width: width(),
        height,
        legend: { show: true },
        scales: {
          x: { time: true, ...(window ? { range: (): uPlot.Range.MinMax => window } : {}) },
          y: { range: (): uPlot.Range.MinMax => [0, valueRangeTop(series)] },
        },
        axes: [{}, { size: 60 }],
        series: [{}, ...series.map((line) => ({ label: line.label, stroke: line.color, width: 2, dash: line.dash, points: { show: false } }))],
      },
      [times, ...series.map((line) => line.values)] as uPlot.AlignedData,
      element,
    );
    const resize = new ResizeObserver(() => plot.setSize({ width: width(), height }));
    resize.observe(element);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [times, series, height, window]);
  return (
    <figure className="chart">
      <figcaption>{title}</figcaption>
      <div ref={holder} role="img" aria-label={summary ?? title} />
    </figure>
  );
}
