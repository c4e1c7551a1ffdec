/**
 * The latency histograms' buckets (kept by the trigger of Migration20261123001100UsageLatencyHistograms,
 * which computes them as latencyBucketSql does): bucket 0 holds 0 ms, bucket k >= 1 holds
 * [1.02^(k-1), 1.02^k) ms. A percentile read from them is the geometric middle of its bucket,
 * so it is within 1% of the exact value, whatever the number of calls: the relative-error
 * guarantee of DDSketch and of HDR histograms, without a sketch library in the database.
 */
export const LATENCY_BUCKET_GROWTH = 1.02;

/** The bucket of a latency in milliseconds (latencyBucketSql is the same in SQL). */
export function latencyBucket(ms: number): number {
  return ms < 1 ? 0 : 1 + Math.floor(Math.log(ms) / Math.log(LATENCY_BUCKET_GROWTH));
}

/** The same bucket in SQL, of an integer column (null stays null). */
export function latencyBucketSql(column: string): string {
  return `case when ${column} < 1 then 0 else (1 + floor(ln(${column}::float8) / ln(${LATENCY_BUCKET_GROWTH})))::smallint end`;
}

/** The value a bucket stands for: the geometric middle of its range. */
export function bucketValue(bucket: number): number {
  return bucket <= 0 ? 0 : LATENCY_BUCKET_GROWTH ** (bucket - 0.5);
}

/** Calls per bucket, in ascending bucket order. */
export type Histogram = { bucket: number; calls: number }[];

/**
 * The percentiles `ps` (0 to 1) of a histogram, interpolated between neighbouring ranks as
 * PostgreSQL's percentile_cont interpolates between values; null for an empty histogram.
 */
export function histogramPercentiles(histogram: Histogram, ps: readonly number[]): (number | null)[] {
  const total = histogram.reduce((sum, entry) => sum + entry.calls, 0);
  if (total === 0) return ps.map(() => null);
  // The value of the call at a 0-based rank, walking the cumulative counts.
  const at = (rank: number): number => {
    let seen = 0;
    for (const entry of histogram) {
      seen += entry.calls;
      if (rank < seen) return bucketValue(entry.bucket);
    }
    return bucketValue(histogram[histogram.length - 1]!.bucket);
  };
  return ps.map((p) => {
    const rank = p * (total - 1);
    const lower = Math.floor(rank);
    const low = at(lower);
    return lower === rank ? low : low + (rank - lower) * (at(lower + 1) - low);
  });
}
