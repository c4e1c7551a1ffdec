import type { AnomalyData } from '../trace/anomaly-components.type.js';

/** Weights of the components in the score; they add up to 1. */
export const ANOMALY_WEIGHTS = {
  rtt_inflation: 0.3,
  as_path_change: 0.2,
  new_asn: 0.1,
  leaves_country: 0.15,
  loss: 0.1,
  incomplete: 0.15,
} as const;

/** What is usual for a probe and target, as the baseline table keeps it. */
export interface Baseline {
  samples: number;
  rttMs: number | null;
  asPath: number[];
  knownAsns: Set<number>;
}

export interface ScoreInput {
  rttMs: number | null;
  asPath: number[];
  loss: number;
  reachedTarget: boolean;
  /** Both ends in PK and a hop in a known foreign country. */
  leavesCountry: boolean;
  baseline: Baseline | null;
}

const clamp = (value: number) => Math.min(1, Math.max(0, value));
const round = (value: number) => Math.round(value * 1000) / 1000;

/** Jaccard distance of two ASN sets: 0 for the same ASNs, 1 for none in common. */
function pathDistance(a: number[], b: number[]): number {
  const left = new Set(a);
  const right = new Set(b);
  if (!left.size && !right.size) return 0;
  let common = 0;
  for (const asn of left) if (right.has(asn)) common++;
  return 1 - common / (left.size + right.size - common);
}

/**
 * The anomaly score of a trace and its components. RTT inflation, AS-path change and new ASNs
 * need a baseline of the same probe and target (they are 0 for the first trace of a pair);
 * leaving the country, loss and an incomplete path do not.
 */
export function scoreTrace(input: ScoreInput): { score: number; components: AnomalyData } {
  const { baseline } = input;
  const ratio = baseline?.rttMs && input.rttMs !== null ? input.rttMs / baseline.rttMs : null;
  const components: AnomalyData = {
    // 1.2x the usual RTT is noise; 3x is as anomalous as it gets.
    rtt_inflation: ratio === null ? 0 : round(clamp((ratio - 1.2) / 1.8)),
    as_path_change: baseline && baseline.asPath.length && input.asPath.length ? round(pathDistance(input.asPath, baseline.asPath)) : 0,
    new_asn: baseline && baseline.knownAsns.size && input.asPath.some((asn) => !baseline.knownAsns.has(asn)) ? 1 : 0,
    leaves_country: input.leavesCountry ? 1 : 0,
    loss: round(clamp(input.loss)),
    incomplete: input.reachedTarget ? 0 : 1,
    baseline_rtt_ms: baseline?.rttMs ?? null,
    baseline_samples: baseline?.samples ?? 0,
  };
  let score = 0;
  for (const [name, weight] of Object.entries(ANOMALY_WEIGHTS)) score += weight * components[name as keyof typeof ANOMALY_WEIGHTS];
  return { score: round(clamp(score)), components };
}

/** The baseline after `trace`: RTT as an exponentially weighted mean (alpha 0.2) of completed traces. */
export function nextBaseline(previous: Baseline | null, trace: { rttMs: number | null; asPath: number[]; reachedTarget: boolean }): Baseline {
  const rttMs =
    trace.reachedTarget && trace.rttMs !== null
      ? previous?.rttMs != null
        ? previous.rttMs * 0.8 + trace.rttMs * 0.2
        : trace.rttMs
      : (previous?.rttMs ?? null);
  return {
    samples: (previous?.samples ?? 0) + 1,
    rttMs,
    asPath: trace.asPath.length ? trace.asPath : (previous?.asPath ?? []),
    knownAsns: new Set([...(previous?.knownAsns ?? []), ...trace.asPath]),
  };
}
