import { describe, expect, it } from 'vitest';
import { duration, ProgressBar } from '../../cli/progress-bar.js';

const report = (read: number) => ({ read, stored: read - 2, duplicates: 1, skipped: [{ position: 'line 3', reason: 'not a traceroute' }] });

/** A terminal's stream that keeps what was drawn. */
function terminal() {
  const written: string[] = [];
  return { isTTY: true, write: (text: string) => written.push(text), written };
}

describe('the import progress bar', () => {
  it('shows the share done, records a second and the time left at that pace', () => {
    let now = 1_000_000;
    const stream = terminal();
    const bar = new ProgressBar('atlas.jsonl', stream, () => now);
    now += 20_000;
    // A quarter of the file in 20 s: three quarters left at that pace, 60 s.
    bar.update(0.25, report(5000));
    expect(stream.written).toEqual(['\ratlas.jsonl [########......................] 25% 5000 records, 250 records/s, 1 min 00 s left; 4998 stored, 1 duplicate, 1 skipped']);
    now += 40_000;
    bar.update(1, report(20000), true);
    expect(stream.written[1]).toBe('\ratlas.jsonl [##############################] 100% 20000 records, 333 records/s, done in 1 min 00 s; 19998 stored, 1 duplicate, 1 skipped');
  });

  it('says the time left is unknown before anything is done, and redraws at most ten times a second', () => {
    let now = 0;
    const stream = terminal();
    const bar = new ProgressBar('f', stream, () => now);
    bar.update(0, report(0));
    expect(stream.written[0]).toContain('0 records, 0 records/s, time left unknown;');
    now += 50;
    bar.update(0.5, report(10));
    expect(stream.written).toHaveLength(1);
  });

  it('draws nothing where stderr is not a terminal', () => {
    const written: string[] = [];
    const bar = new ProgressBar('f', { isTTY: false, write: (text: string) => written.push(text) });
    bar.update(1, report(3), true);
    bar.done();
    expect(written).toEqual([]);
  });

  it.each([
    [0.4, '0 s'],
    [59, '59 s'],
    [200, '3 min 20 s'],
    [3900, '1 h 05 min'],
  ])('reads %s seconds as "%s"', (seconds, text) => {
    expect(duration(seconds)).toBe(text);
  });
});
