import { randomUUID } from 'node:crypto';
import type { Opt } from '@mikro-orm/core';
import { Check, Entity, Enum, Index, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';
import { DateTimeResolver } from 'graphql-scalars';
import { Directive, Field, Float, ID, Int, ObjectType } from '../../shared/type-graphql.js';
import { TraceDirection } from './trace-direction.js';
import { TraceStatus } from './trace-status.js';

/**
 * One traceroute measurement. Traces are public research data: any key may read every trace,
 * so rows carry no account or mode.
 */
@ObjectType({ description: 'A traceroute measurement.' })
@Directive('@key(fields: "id")')
@Entity({ tableName: 'trace' })
@Index({
  name: 'trace_measured_at_id_index',
  properties: ['measuredAt', 'id'],
  columns: [
    { name: 'measured_at', sort: 'desc' },
    { name: 'id', sort: 'desc' },
  ],
})
// Compared as numeric: PostgreSQL stores a double comparison as `(0)::double precision`, which
// MikroORM 7.2's schema diff misreads, so the migrations-match-entities check would never pass.
@Check({ name: 'trace_anomaly_score_check', expression: '"anomaly_score"::numeric >= 0 and "anomaly_score"::numeric <= 1' })
export class Trace {
  @Field(() => ID, { description: 'The trace_id of the public API.' })
  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @Field(() => TraceDirection)
  @Enum({ items: () => TraceDirection })
  direction!: TraceDirection;

  @Field(() => String)
  @Property({ type: 'string', length: 200 })
  probeCity!: string;

  @Field(() => String, { description: 'ISO 3166-1 alpha-2 code of the probe country.' })
  @Property({ type: 'character', length: 2 })
  probeCountry!: string;

  @Field(() => Int, { description: 'AS number of the probe network.' })
  @Property({ type: 'integer' })
  probeAsn!: number;

  @Field(() => String, { nullable: true })
  @Property({ type: 'string', length: 253, nullable: true })
  targetDomain?: string | null;

  /** Kept as the text the probe reported, so the exact-match filter compares like with like. */
  @Field(() => String)
  @Property({ type: 'string', length: 45 })
  targetIp!: string;

  @Field(() => String, { nullable: true })
  @Property({ type: 'string', length: 200, nullable: true })
  targetCity?: string | null;

  @Field(() => Float, { description: 'From 0.0 (ordinary) to 1.0 (most anomalous).' })
  @Property({ type: 'double', runtimeType: 'number' })
  anomalyScore!: number;

  @Field(() => TraceStatus)
  @Enum({ items: () => TraceStatus })
  status!: TraceStatus;

  /** Millisecond precision, like a JavaScript Date: a page cursor then names its row exactly. */
  @Field(() => DateTimeResolver, { description: 'When the probe ran the traceroute.' })
  @Property({ type: 'datetime', length: 3 })
  measuredAt!: Date;

  @Field(() => DateTimeResolver, { description: 'When the platform stored the trace.' })
  @Property({ type: 'datetime' })
  createdAt: Opt<Date> = new Date();
}
