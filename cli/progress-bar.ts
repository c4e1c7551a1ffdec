import type { ImportReport } from '../subgraphs/traceroute/ingest/trace-importer.js';

/** What the bar writes to: a terminal's stream (nothing is drawn anywhere else: stdout carries only JSON). */
interface BarStream {
  isTTY?: boolean;
  write(text: string): unknown;
}

/** Seconds as people read them: `42 s`, `3 min 20 s`, `1 h 05 min`. */
export function duration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, '0')} s`;
  return `${Math.floor(s / 3600)} h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')} min`;
}

/**
 * A progress bar on stderr when it is a terminal: how far, how many records a second, and the time
 * left at that pace (from the share done so far, bytes of a file or traces of a count); at the
 * end, the time it took. Redrawn at most ten times a second.
 */
export class ProgressBar {
  private last = -Infinity;
  private readonly started: number;

  constructor(
    private readonly label: string,
    private readonly stream: BarStream = process.stderr,
    private readonly now: () => number = Date.now,
  ) {
    this.started = now();
  }

  update(fraction: number, report: ImportReport, force = false): void {
    const now = this.now();
    if (!this.stream.isTTY || (!force && now - this.last < 100)) return;
    this.last = now;
    this.stream.write(`\r${this.line(Math.min(1, Math.max(0, fraction)), report, now)}`);
  }

  /** The bar's text at `now` (without the carriage return that redraws it). */
  line(fraction: number, report: ImportReport, now = this.now()): string {
    const width = 30;
    const done = Math.round(fraction * width);
    const elapsed = (now - this.started) / 1000;
    const rate = elapsed > 0 ? Math.round(report.read / elapsed) : 0;
    const pace = fraction >= 1 ? `done in ${duration(elapsed)}` : fraction > 0 && elapsed > 0 ? `${duration((elapsed * (1 - fraction)) / fraction)} left` : 'time left unknown';
    return (
      `${this.label} [${'#'.repeat(done)}${'.'.repeat(width - done)}] ${Math.round(fraction * 100)}% ` +
      `${report.read} records, ${rate} records/s, ${pace}; ` +
      `${report.stored} stored, ${report.duplicates} duplicate, ${report.skipped.length} skipped`
    );
  }

  done(): void {
    if (this.stream.isTTY) this.stream.write('\n');
  }
}
