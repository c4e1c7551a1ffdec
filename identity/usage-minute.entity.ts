import { PrimaryKeyProp } from '@mikro-orm/core';
import { Entity, Index, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';
import type { Mode } from '../core/principal.js';

/**
 * Requests of one account and mode in one minute, per method, path template and status, as the
 * edge counted them (edge/interfaces/dashboard/usage-recorder.ts). Upserted in batches; no foreign
 * key, so the hot path's flush never waits on the account row.
 */
@Entity({ tableName: 'usage_minute' })
// The pruning of rows past the longest range.
@Index({ properties: ['minute'] })
export class UsageMinute {
  [PrimaryKeyProp]?: ['accountId', 'mode', 'minute', 'method', 'path', 'status'];

  @PrimaryKey({ type: 'uuid' })
  accountId!: string;

  @PrimaryKey({ type: 'string', length: 8 })
  mode!: Mode;

  @PrimaryKey({ type: 'datetime' })
  minute!: Date;

  @PrimaryKey({ type: 'string', length: 8 })
  method!: string;

  @PrimaryKey({ type: 'string', length: 200 })
  path!: string;

  @PrimaryKey({ type: 'smallint' })
  status!: number;

  @Property({ type: 'integer' })
  count!: number;

  @Property({ type: 'double' })
  totalMs!: number;

  @Property({ type: 'double' })
  maxMs!: number;
}
