import { registerEnumType } from '../../shared/type-graphql.js';

/** Whether the measurement reached its target. */
export enum TraceStatus {
  COMPLETED = 'completed',
  FAILED = 'failed',
}

registerEnumType(TraceStatus, { name: 'TraceStatus' });
