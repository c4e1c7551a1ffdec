import { randomUUID } from 'node:crypto';
import type { Opt } from '@mikro-orm/core';
import { ArrayType } from '@mikro-orm/core';
import { Check, Entity, Enum, Index, PrimaryKey, Property, Unique } from '@mikro-orm/decorators/legacy';
import { DateTimeResolver } from '../../shared/scalars.js';
import { Directive, Field, Float, ID, Int, ObjectType } from '../../shared/type-graphql.js';
import { AnomalyComponentsType, type AnomalyData } from './anomaly-components.type.js';
import { HopType, type HopData } from './hop.type.js';
import { TraceDirection } from './trace-direction.js';
import { TraceSource } from './trace-source.js';
import { TraceStatus } from './trace-status.js';
import { TraceStopReason } from './trace-stop-reason.js';
import { TraceProvenanceType, type ProvenanceData } from './trace-provenance.type.js';

const ORDER = [
  { name: 'measured_at', sort: 'desc' as const },
  { name: 'id', sort: 'desc' as const },
];

/** Each filter leads an index and the keyset order follows, so a filtered page is one range scan. */
function filterIndex(property: keyof Trace & string, column: string): ClassDecorator {
  return Index({ name: `trace_${column}_index`, properties: [property, 'measuredAt', 'id'] as never, columns: [{ name: column }, ...ORDER] }) as ClassDecorator;
}

/** An index MikroORM cannot describe by properties (an expression, another access method). */
function expressionIndex(name: string, definition: string): ClassDecorator {
  return Index({ name, expression: `create index "${name}" on "traceroute"."trace" ${definition}` }) as ClassDecorator;
}

/**
 * One traceroute measurement with its hops. Traces are public research data: any traceroute key
 * reads every trace, so rows carry no account. The table is range-partitioned by month of
 * `measured_at` (raw SQL in the migration: MikroORM leaves partitioning it is not told about
 * alone), which is why `measured_at` is part of the primary key and of the identity.
 * GraphQL names are camelCase like the rest of the graph; the REST view renames them to the public
 * API's snake_case (edge/interfaces/traceroute/traceroute.routes.ts).
 */
@ObjectType('Trace', { description: 'A traceroute measurement.' })
@Directive('@key(fields: "traceId")')
@Entity({ tableName: 'trace' })
@Index({ name: 'trace_order_index', properties: ['measuredAt', 'id'], columns: ORDER })
@filterIndex('direction', 'direction')
@filterIndex('status', 'status')
@filterIndex('probeCountry', 'probe_country')
@filterIndex('probeAsn', 'probe_asn')
@filterIndex('targetIp', 'target_ip')
// MikroORM 7.2 reads the sort of "id" off "msm_id" when it introspects these two, so they are
// declared as expressions (compared by name); the definition is filterIndex's.
@expressionIndex('trace_msm_id_index', '("msm_id", "measured_at" desc, "id" desc)')
@expressionIndex('trace_probe_id_index', '("probe_id", "measured_at" desc, "id" desc)')
@filterIndex('af', 'af')
@filterIndex('protocol', 'protocol')
@filterIndex('targetAsn', 'target_asn')
@expressionIndex('trace_probe_city_lower_index', '(lower("probe_city"), "measured_at" desc, "id" desc)')
@expressionIndex('trace_target_city_lower_index', '(lower("target_city"), "measured_at" desc, "id" desc)')
// "Passes through" an address or an AS: containment in the hop arrays, answered by GIN.
@expressionIndex('trace_hop_ips_index', 'using gin ("hop_ips")')
@expressionIndex('trace_hop_asns_index', 'using gin ("hop_asns")')
@Index({ name: 'trace_anomaly_index', properties: ['anomalyScore', 'measuredAt'], columns: [{ name: 'anomaly_score', sort: 'desc' }, { name: 'measured_at', sort: 'desc' }] })
@Index({
  name: 'trace_target_domain_trgm_index',
  expression: 'create index "trace_target_domain_trgm_index" on "traceroute"."trace" using gin ("target_domain" public.gin_trgm_ops)',
})
@Unique({ name: 'trace_measurement_key_measured_at_unique', properties: ['measurementKey', 'measuredAt'] })
// Compared as numeric: MikroORM 7.2's schema diff misreads PostgreSQL's `(0)::real` in a check.
@Check({ name: 'trace_anomaly_score_check', expression: '"anomaly_score"::numeric >= 0 and "anomaly_score"::numeric <= 1' })
@Check({ name: 'trace_loss_check', expression: '"loss"::numeric >= 0 and "loss"::numeric <= 1' })
export class Trace {
  /** A UUIDv7 whose time is `measured_at`, so a lookup by id alone reaches one partition. */
  @Field(() => ID, { name: 'traceId' })
  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  /** Millisecond precision, like a JavaScript Date: a page cursor then names its row exactly. */
  @Field(() => DateTimeResolver, { description: 'When the probe ran the traceroute.' })
  @PrimaryKey({ type: 'datetime', length: 3 })
  measuredAt!: Date;

  /** `<source>:<measurement>:<probe>`; with measuredAt, what makes a re-import a duplicate. */
  @Property({ type: 'string', length: 160 })
  measurementKey!: string;

  @Enum({ items: () => TraceSource })
  source!: TraceSource;

  @Field(() => Int, { nullable: true, description: 'RIPE Atlas measurement id.' })
  @Property({ type: 'integer', nullable: true })
  msmId?: number | null;

  @Field(() => Int, { nullable: true, description: 'RIPE Atlas probe id.' })
  @Property({ type: 'integer', nullable: true })
  probeId?: number | null;

  @Field(() => TraceDirection)
  @Enum({ items: () => TraceDirection })
  direction!: TraceDirection;

  @Field(() => TraceStatus)
  @Enum({ items: () => TraceStatus })
  status!: TraceStatus;

  @Field(() => Int, { description: 'IP version, 4 or 6.' })
  @Property({ type: 'smallint' })
  af!: number;

  @Field(() => String, { nullable: true, description: 'ICMP, UDP or TCP.' })
  @Property({ type: 'string', length: 16, nullable: true })
  protocol?: string | null;

  @Field(() => String, { nullable: true })
  @Property({ type: 'string', length: 45, nullable: true })
  probeIp?: string | null;

  @Field(() => String, { nullable: true })
  @Property({ type: 'string', length: 200, nullable: true })
  probeCity?: string | null;

  @Field(() => String, { nullable: true, description: 'ISO 3166-1 alpha-2.' })
  @Property({ type: 'character', length: 2, nullable: true })
  probeCountry?: string | null;

  @Field(() => Int, { nullable: true })
  @Property({ type: 'integer', nullable: true })
  probeAsn?: number | null;

  @Field(() => String, { nullable: true })
  @Property({ type: 'string', length: 200, nullable: true })
  probeAsName?: string | null;

  @Field(() => Float, { name: 'probeLatitude', nullable: true })
  @Property({ type: 'float', nullable: true, runtimeType: 'number' })
  probeLat?: number | null;

  @Field(() => Float, { name: 'probeLongitude', nullable: true })
  @Property({ type: 'float', nullable: true, runtimeType: 'number' })
  probeLon?: number | null;

  @Field(() => String, { nullable: true })
  @Property({ type: 'string', length: 253, nullable: true })
  targetDomain?: string | null;

  /** Null when the measurement failed before it had an address to trace to (name resolution failed). */
  @Field(() => String, { nullable: true, description: 'Null when the measurement failed before any hop (see error).' })
  @Property({ type: 'string', length: 45, nullable: true })
  targetIp?: string | null;

  @Field(() => String, { nullable: true })
  @Property({ type: 'string', length: 200, nullable: true })
  targetCity?: string | null;

  @Field(() => String, { nullable: true })
  @Property({ type: 'character', length: 2, nullable: true })
  targetCountry?: string | null;

  @Field(() => Int, { nullable: true })
  @Property({ type: 'integer', nullable: true })
  targetAsn?: number | null;

  @Field(() => String, { nullable: true })
  @Property({ type: 'string', length: 200, nullable: true })
  targetAsName?: string | null;

  @Field(() => Float, { name: 'targetLatitude', nullable: true })
  @Property({ type: 'float', nullable: true, runtimeType: 'number' })
  targetLat?: number | null;

  @Field(() => Float, { name: 'targetLongitude', nullable: true })
  @Property({ type: 'float', nullable: true, runtimeType: 'number' })
  targetLon?: number | null;

  @Field(() => Int)
  @Property({ type: 'smallint' })
  hopCount!: number;

  @Field(() => Int)
  @Property({ type: 'smallint' })
  respondingHops!: number;

  @Field(() => Float, { description: 'Share of all probe packets without an answer, 0.0 to 1.0.' })
  @Property({ type: 'float', runtimeType: 'number' })
  loss!: number;

  @Field(() => Float, { nullable: true, description: 'Mean RTT to the target (ms); null when it never answered.' })
  @Property({ type: 'float', nullable: true, runtimeType: 'number' })
  rttMs?: number | null;

  @Field(() => [Int], { description: 'ASNs along the path, consecutive repeats merged.' })
  @Property({ type: new ArrayType<number>((i) => Number(i)), columnType: 'int[]' })
  asPath!: number[];

  @Field(() => Float, { description: 'From 0.0 (ordinary) to 1.0 (most anomalous).' })
  @Property({ type: 'float', runtimeType: 'number' })
  anomalyScore!: number;

  @Field(() => AnomalyComponentsType, { description: 'The components of anomalyScore.' })
  @Property({ type: 'json' })
  anomaly!: AnomalyData;

  @Field(() => String, { nullable: true, description: 'Why the measurement failed before its first probe went out (e.g. RIPE Atlas "name resolution failed", "bind failed: …"); null otherwise.' })
  @Property({ type: 'string', length: 500, nullable: true })
  error?: string | null;

  /** Null on traces stored before the stop reason was recorded. */
  @Field(() => TraceStopReason, { nullable: true, description: 'Why the traceroute stopped (scamper stop_reason; read from the result for RIPE Atlas). Null on traces stored before it was recorded.' })
  @Enum({ items: () => TraceStopReason, nullable: true })
  stopReason?: TraceStopReason | null;

  /** Every address that answered in time at some hop (not GraphQL: the hops say it; this is for "passes through"). */
  @Property({ type: new ArrayType<string>((i) => String(i)), columnType: 'inet[]' })
  hopIps!: string[];

  /** The ASNs of those addresses, for "passes through an AS". */
  @Property({ type: new ArrayType<number>((i) => Number(i)), columnType: 'int[]' })
  hopAsns!: number[];

  /** Null on traces stored before it was recorded. */
  @Field(() => TraceProvenanceType, { nullable: true, description: 'Where each enriched figure came from: the source\'s own metadata or a database and its date. Null on traces stored before it was recorded.' })
  @Property({ type: 'json', nullable: true })
  provenance?: ProvenanceData | null;

  /** The record as the imported file has it (GraphQL: traceRecord); null for generated traces and those imported before it was kept. */
  @Property({ type: 'text', nullable: true, lazy: true })
  sourceRecord?: string | null;

  /** Null in a search without include_hops: the column is then not read at all. */
  @Field(() => [HopType], { nullable: true, description: 'Hop details; in searches only with includeHops.' })
  @Property({ type: 'json', lazy: true })
  hops?: HopData[] | null;

  @Field(() => DateTimeResolver, { description: 'When the platform stored the trace.' })
  @Property({ type: 'datetime' })
  createdAt: Opt<Date> = new Date();
}
