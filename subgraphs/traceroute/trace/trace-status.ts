import { registerEnumType } from 'type-graphql';

/** Whether the measurement reached its target. */
export enum TraceStatus {
  COMPLETED = 'completed',
  FAILED = 'failed',
}

registerEnumType(TraceStatus, { name: 'TraceStatus' });
