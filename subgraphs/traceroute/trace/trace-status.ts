import { registerEnumType } from '../../shared/type-graphql.js';

/** Whether the measurement reached its target (the rule: trace-builder.ts statusOf). */
export enum TraceStatus {
  completed = 'completed',
  failed = 'failed',
}

registerEnumType(TraceStatus, { name: 'TraceStatus' });
