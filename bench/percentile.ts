/** The p-th percentile of ascending `sorted`. Its own module, so the latency sampler's worker thread loads it without the platform. */
export function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}
