import { Entity, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';

/**
 * The usage records summed per UTC hour, provider, model and interface, kept by a statement
 * trigger on `usage_record` (Migration20261123001000UsageHours): each batch the recorder inserts
 * adds its sums in one upsert. Usage statistics over every call read these instead of millions of
 * records; ranges that start or end inside an hour read the records of those edges. There is no
 * account or address here: scoped statistics read the records through their indexes. Not in
 * GraphQL; dropping a month of records should delete its hours too.
 */
@Entity({ tableName: 'usage_hour' })
export class UsageHour {
  @PrimaryKey({ type: 'datetime', length: 6 })
  hour!: Date;

  @PrimaryKey({ type: 'string', length: 64 })
  provider!: string;

  @PrimaryKey({ type: 'string', length: 200 })
  model!: string;

  @PrimaryKey({ type: 'text' })
  interface!: string;

  @Property({ type: 'bigint' })
  calls!: string;

  @Property({ type: 'bigint' })
  errors!: string;

  @Property({ type: 'bigint' })
  promptTokens!: string;

  @Property({ type: 'bigint' })
  completionTokens!: string;

  /** Calls answered 5xx (performance's error rate). */
  @Property({ type: 'bigint' })
  serverErrors!: string;

  /** Completion tokens and latency of the successful calls that produced tokens (throughput). */
  @Property({ type: 'bigint' })
  generationTokens!: string;

  @Property({ type: 'bigint' })
  generationMs!: string;

  /** Images returned by image calls. */
  @Property({ type: 'bigint' })
  images!: string;
}
