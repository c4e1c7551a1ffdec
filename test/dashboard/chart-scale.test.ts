import { describe, expect, it } from 'vitest';
import { valueRangeTop } from '../../dashboard/src/components/chart-scale.js';

describe('a chart\'s value axis', () => {
  it('scales to the traffic, not to the limit line above it', () => {
    const series = [
      { label: 'Requests', values: [0, 3, 7, null, 2], color: 'blue' },
      { label: 'Limit (1000/min)', values: [1000, 1000, 1000, 1000, 1000], color: 'grey', reference: true },
    ];
    const top = valueRangeTop(series);
    expect(top).toBeGreaterThanOrEqual(7);
    expect(top).toBeLessThan(10);
  });

  it('keeps a readable axis with no traffic at all', () => {
    expect(valueRangeTop([{ label: 'Requests', values: [0, 0, null], color: 'blue' }])).toBe(1);
  });
});
