import { DomainError } from '../../../core/errors.js';
import { registerEnumType } from '../../shared/type-graphql.js';

/** The width of a usage statistics time bucket; buckets start at whole UTC minutes, hours, days. */
export enum AnalyticsBucket {
  MINUTE = 'minute',
  HOUR = 'hour',
  DAY = 'day',
}

registerEnumType(AnalyticsBucket, {
  name: 'InferenceAnalyticsBucket',
  description: 'The width of a usage statistics time bucket (UTC). When not given: minute up to 6 hours, hour up to 14 days, day beyond.',
});

const BUCKET_MS: Record<AnalyticsBucket, number> = { minute: 60_000, hour: 3_600_000, day: 86_400_000 };

/** The most buckets one range may be cut into: 90 days by the hour, so a chart never gets 100,000 points. */
export const MAX_BUCKETS = 2160;

/** The bucket asked for, or the one the range suggests; BAD_USER_INPUT naming `bucket` when it cuts the range too fine. */
export function checkedBucket(from: Date, to: Date, bucket?: AnalyticsBucket | null): AnalyticsBucket {
  const span = to.getTime() - from.getTime();
  if (bucket == null) return span <= 6 * 3_600_000 ? AnalyticsBucket.MINUTE : span <= 14 * 86_400_000 ? AnalyticsBucket.HOUR : AnalyticsBucket.DAY;
  if (Math.ceil(span / BUCKET_MS[bucket]) > MAX_BUCKETS) {
    throw new DomainError('BAD_USER_INPUT', `bucket ${bucket} cuts this range into more than ${MAX_BUCKETS} buckets; choose a wider bucket or a shorter range`, {
      param: 'bucket',
      reason: 'invalid_parameter',
    });
  }
  return bucket;
}
