import { Entity, Index, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';

/**
 * The successful calls of one UTC hour, provider and model counted per latency bucket
 * (latency-histogram.ts; metric 0 latency, 1 time to first token), kept by the usage records'
 * statement trigger (Migration20261123001100UsageLatencyHistograms). Model performance over every
 * call reads percentiles from these instead of sorting millions of records. Not in GraphQL.
 */
@Entity({ tableName: 'usage_latency_hour' })
@Index({ name: 'usage_latency_hour_provider_model_index', properties: ['provider', 'model', 'hour'] })
export class UsageLatencyHour {
  @PrimaryKey({ type: 'datetime', length: 6 })
  hour!: Date;

  @PrimaryKey({ type: 'string', length: 64 })
  provider!: string;

  @PrimaryKey({ type: 'string', length: 200 })
  model!: string;

  @PrimaryKey({ type: 'smallint' })
  metric!: number;

  @PrimaryKey({ type: 'smallint' })
  bucket!: number;

  @Property({ type: 'bigint' })
  calls!: string;
}
