import { inferenceErrors, inferenceTimeToFirstToken, inferenceTokens } from '../../../core/metrics/platform-metrics.js';
import type { UsageEntry } from './usage-entry.js';

/**
 * One call's figures for Prometheus, from the usage entry every interface reports. A model no
 * provider serves (404) is counted as `(unknown)`: a client's made-up names add no series.
 */
export function observeInference(entry: UsageEntry): void {
  const model = entry.status === 404 ? '(unknown)' : entry.model;
  const labels = { provider: entry.provider || '(none)', model };
  if (entry.promptTokens > 0) inferenceTokens.inc({ ...labels, kind: 'prompt' }, entry.promptTokens);
  if (entry.completionTokens > 0) inferenceTokens.inc({ ...labels, kind: 'completion' }, entry.completionTokens);
  if (entry.timeToFirstTokenMs != null) inferenceTimeToFirstToken.observe(labels, entry.timeToFirstTokenMs / 1000);
  if (entry.status >= 400) inferenceErrors.inc({ ...labels, code: entry.errorCode ?? String(entry.status) });
}
