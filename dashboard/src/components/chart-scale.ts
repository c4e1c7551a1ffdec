export interface LineSeries {
  label: string;
  values: (number | null)[];
  color: string;
  dash?: number[];
  /** A reference line (a limit): drawn and listed where it falls, but the scale follows the data, not it. */
  reference?: boolean;
}

/** The top of the value axis: the data's highest point with a little headroom, at least 1 (never a reference line's). */
export function valueRangeTop(series: LineSeries[]): number {
  let highest = 0;
  for (const line of series) {
    if (line.reference) continue;
    for (const value of line.values) if (value !== null && value > highest) highest = value;
  }
  return highest > 0 ? highest * 1.15 : 1;
}
