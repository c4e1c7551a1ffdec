import { unlinkSync } from 'node:fs';
import path from 'node:path';

/**
 * Named places where a test can have this process killed (SIGKILL), to prove what a crash there
 * leaves behind. Off unless FAULT_POINTS_DIR is set (the fault-injection tests set it); a point
 * is armed by a file of its name in that directory, and fires once: the process that removes the
 * file dies, so a restarted process and a retried request pass.
 */
export type FaultPoint =
  | 'subgraph.mutation.before-commit'
  | 'subgraph.mutation.after-commit'
  | 'edge.idempotency.claimed'
  | 'edge.idempotency.answered';

const dir = process.env.FAULT_POINTS_DIR;

/** Kills this process at `point` when a test armed it; nothing otherwise. */
export function faultPoint(point: FaultPoint): void {
  if (!dir) return;
  try {
    unlinkSync(path.join(dir, point));
  } catch {
    return;
  }
  process.kill(process.pid, 'SIGKILL');
}
