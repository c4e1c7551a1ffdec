import { describe, expect, it } from 'vitest';
import { nextBaseline, scoreTrace } from '../../../subgraphs/traceroute/scoring/anomaly.js';
import { directionOf } from '../../../subgraphs/traceroute/scoring/direction.js';

describe('direction', () => {
  it.each([
    [{ country: 'PK', asn: 17557 }, { country: 'US', asn: 15169 }, 'pk_to_outside'],
    [{ country: 'DE', asn: 3320 }, { country: 'PK', asn: 9541 }, 'outside_to_pk'],
    [{ country: 'PK', asn: 17557 }, { country: 'PK', asn: 9541 }, 'cross_isp'],
    [{ country: 'PK', asn: 17557 }, { country: 'PK', asn: 17557 }, 'within_isp'],
    [{ country: 'PK', asn: null }, { country: 'PK', asn: null }, 'cross_isp'],
    [{ country: 'FR', asn: 205344 }, { country: 'NL', asn: 50628 }, 'cross_isp'],
    [{ country: 'US', asn: 15169 }, { country: 'US', asn: 15169 }, 'within_isp'],
    [{ country: null, asn: null }, { country: 'PK', asn: 9541 }, 'outside_to_pk'],
  ])('%o to %o is %s', (probe, target, direction) => {
    expect(directionOf(probe, target)).toBe(direction);
  });
});

describe('anomaly score', () => {
  const baseline = { samples: 10, rttMs: 20, asPath: [17557, 9541], knownAsns: new Set([17557, 9541]) };
  const ordinary = { rttMs: 21, asPath: [17557, 9541], loss: 0, reachedTarget: true, leavesCountry: false, baseline };

  it('is 0 for a trace like its baseline', () => {
    expect(scoreTrace(ordinary)).toMatchObject({ score: 0, components: { rtt_inflation: 0, as_path_change: 0, new_asn: 0 } });
  });

  it('grows with RTT inflation from 1.2x to 3x the baseline', () => {
    expect(scoreTrace({ ...ordinary, rttMs: 24 }).components.rtt_inflation).toBe(0);
    expect(scoreTrace({ ...ordinary, rttMs: 42 }).components.rtt_inflation).toBe(0.5);
    expect(scoreTrace({ ...ordinary, rttMs: 200 }).components.rtt_inflation).toBe(1);
  });

  it('scores a domestic path that detours abroad through a new ASN with every component', () => {
    const { score, components } = scoreTrace({ ...ordinary, rttMs: 80, asPath: [17557, 6453, 9541], leavesCountry: true, loss: 0.2 });
    expect(components).toMatchObject({ rtt_inflation: 1, as_path_change: 0.333, new_asn: 1, leaves_country: 1, loss: 0.2, incomplete: 0 });
    expect(score).toBeCloseTo(0.3 + 0.2 * 0.333 + 0.1 + 0.15 + 0.02, 3);
  });

  it('counts only loss and an incomplete path for a first trace without baseline', () => {
    expect(scoreTrace({ ...ordinary, baseline: null, rttMs: null, reachedTarget: false, loss: 0.5 })).toMatchObject({
      score: 0.2,
      components: { rtt_inflation: 0, as_path_change: 0, new_asn: 0, incomplete: 1, loss: 0.5, baseline_samples: 0 },
    });
  });

  it('keeps an exponentially weighted RTT of completed traces and every ASN seen', () => {
    const next = nextBaseline(baseline, { rttMs: 40, asPath: [17557, 6453], reachedTarget: true });
    expect(next).toMatchObject({ samples: 11, rttMs: 24, asPath: [17557, 6453] });
    expect([...next.knownAsns].sort()).toEqual([17557, 6453, 9541].sort());
    expect(nextBaseline(baseline, { rttMs: null, asPath: [], reachedTarget: false }).rttMs).toBe(20);
  });
});
