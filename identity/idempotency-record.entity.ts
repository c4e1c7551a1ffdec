import { randomUUID } from 'node:crypto';
import { Entity, Index, ManyToOne, PrimaryKey, Property, Unique } from '@mikro-orm/decorators/legacy';
import type { Mode } from '../core/principal.js';
import { Account } from './account.entity.js';

/** `in_progress` while the first request with the key runs; `completed` once its response is kept. */
export type IdempotencyState = 'in_progress' | 'completed';

/**
 * One Idempotency-Key of one account in one mode, and the first response given for it. The row's
 * id is the claim: whoever inserted it runs the request, and only that id may complete it.
 */
@Entity({ tableName: 'idempotency_record' })
@Unique({ properties: ['account', 'mode', 'key'] })
// The retention sweep takes the oldest rows first.
@Index({ properties: ['createdAt'] })
export class IdempotencyRecord {
  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @ManyToOne(() => Account, { deleteRule: 'cascade' })
  account!: Account;

  @Property({ type: 'string', length: 8 })
  mode!: Mode;

  @Property({ type: 'string', length: 255 })
  key!: string;

  /** Hex SHA-256 of the method, the path with its query string, and the raw body bytes. */
  @Property({ type: 'string', length: 64 })
  fingerprint!: string;

  @Property({ type: 'string', length: 16 })
  state!: IdempotencyState;

  /** The advisory lock (idempotency-owner.ts) of the edge process running an `in_progress` claim. */
  @Property({ type: 'integer', nullable: true })
  ownerLock?: number | null;

  @Property({ type: 'integer', nullable: true })
  responseStatus?: number | null;

  @Property({ type: 'string', length: 255, nullable: true })
  responseContentType?: string | null;

  @Property({ type: 'blob', nullable: true })
  responseBody?: Buffer | null;

  @Property({ type: 'datetime' })
  createdAt: Date = new Date();
}
