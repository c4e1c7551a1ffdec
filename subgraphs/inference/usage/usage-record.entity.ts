import { Entity, Enum, Index, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';
import { DateTimeResolver } from '../../shared/scalars.js';
import { Directive, Field, ID, Int, ObjectType } from '../../shared/type-graphql.js';
import { UsageInterface } from './usage-interface.js';
import { USAGE_COLUMN_LENGTHS as LENGTHS } from './usage-limits.js';

/**
 * One inference call on any interface: who made it (key, or client address for the keyless
 * proxy), where it went, what it cost in tokens and time, and how it ended. One row per call, so
 * the row is kept narrow: no created_at, fixed-width columns first. The table is range-partitioned
 * by month of `occurred_at` (raw SQL in the migration, like traceroute's traces), which is why
 * `occurred_at` is part of the primary key; dropping an old month is how retention will work.
 */
@ObjectType('InferenceUsageRecord', { description: 'One inference call, as recorded for usage.' })
@Directive('@key(fields: "id")')
@Entity({
  tableName: 'usage_record',
  // Keeps analytics/usage-hour.entity.ts's hourly sums (Migration20261123001000UsageHours); declared
  // as raw DDL, which the schema diff leaves to the migration (a transition table has no other form).
  triggers: [
    {
      name: 'usage_hour_add',
      timing: 'after',
      events: ['insert'],
      forEach: 'statement',
      expression: 'create trigger "usage_hour_add" after insert on "inference"."usage_record" referencing new table as "added" for each statement execute function "inference"."usage_hour_add"();',
    },
  ],
})
// Ascending: a backward scan gives the lists' (occurred_at desc, id desc) order just as well, and
// MikroORM 7.2.1 misreads DESC on a column whose name is part of another's ("id" in "provider").
@Index({ name: 'usage_record_order_index', properties: ['occurredAt', 'id'] })
@Index({ name: 'usage_record_account_index', properties: ['accountId', 'occurredAt', 'id'] })
@Index({ name: 'usage_record_key_index', properties: ['keyId', 'occurredAt', 'id'] })
@Index({ name: 'usage_record_provider_model_index', properties: ['provider', 'model', 'occurredAt', 'id'] })
// Analytics (Migration20261123000900UsageAnalytics): rows arrive in time order, so a BRIN index lets a
// range that covers part of a month read only that part; keyless callers page their own calls by address.
@Index({ name: 'usage_record_occurred_brin', properties: ['occurredAt'], type: 'brin' })
@Index({ name: 'usage_record_client_index', properties: ['clientAddress', 'occurredAt', 'id'], where: '"client_address" is not null' })
export class UsageRecord {
  /** A UUIDv7 whose time is `occurred_at`: a lookup by id alone reaches one partition, and ids do not reveal the platform's call volume as a sequence would. */
  @Field(() => ID)
  @PrimaryKey({ type: 'uuid' })
  id!: string;

  /** When the call arrived; millisecond precision, like a JavaScript Date, so a page cursor names its row exactly. */
  @Field(() => DateTimeResolver, { description: 'When the call arrived.' })
  @PrimaryKey({ type: 'datetime', length: 3 })
  occurredAt!: Date;

  @Field(() => ID, { nullable: true, description: 'The account of the key; null for keyless interfaces.' })
  @Property({ type: 'uuid', nullable: true })
  accountId?: string | null;

  @Field(() => Int)
  @Property({ type: 'integer' })
  promptTokens!: number;

  @Field(() => Int, { description: 'Exact for every finished call, streamed or not (upstreams are always asked for usage). A call abandoned or failed midway records 0: engines report usage when they finish.' })
  @Property({ type: 'integer' })
  completionTokens!: number;

  @Field(() => Int, { description: 'Images returned (image calls); 0 for text calls.' })
  @Property({ type: 'smallint', default: 0 })
  images!: number;

  @Field(() => Int, { description: 'From arrival to the last byte of the answer, in milliseconds.' })
  @Property({ type: 'integer' })
  latencyMs!: number;

  @Field(() => Int, { nullable: true, description: 'From arrival to the first token, in milliseconds; null when no token came.' })
  @Property({ type: 'integer', nullable: true })
  timeToFirstTokenMs?: number | null;

  @Field(() => Int, { description: 'The HTTP status answered.' })
  @Property({ type: 'smallint' })
  status!: number;

  @Field(() => Boolean)
  @Property({ type: 'boolean' })
  streamed!: boolean;

  @Field(() => UsageInterface)
  @Enum({ items: () => UsageInterface })
  interface!: UsageInterface;

  @Field(() => String, { description: 'The provider that served the call.' })
  @Property({ type: 'string', length: LENGTHS.provider })
  provider!: string;

  @Field(() => String)
  @Property({ type: 'string', length: LENGTHS.model })
  model!: string;

  @Field(() => ID, { nullable: true, description: 'The key that made the call; null for keyless interfaces.' })
  @Property({ type: 'string', length: LENGTHS.keyId, nullable: true })
  keyId?: string | null;

  @Field(() => String, { nullable: true, description: "The client's address as the edge saw it, for keyless interfaces." })
  @Property({ type: 'string', length: LENGTHS.clientAddress, nullable: true })
  clientAddress?: string | null;

  @Field(() => String, { nullable: true, description: 'The error code answered, when the call failed.' })
  @Property({ type: 'string', length: LENGTHS.errorCode, nullable: true })
  errorCode?: string | null;
}
