import { randomUUID } from 'node:crypto';
import { OptionalProps } from '@mikro-orm/core';
import { Entity, Index, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';
import type { Mode } from '../../../core/principal.js';

/**
 * One state change in the marketplace (a posting's status, an application's status or stage, a
 * tender's or bid's status): who, when, from, to and why. Written in the transaction that made
 * the change and only ever inserted, so the trail cannot disagree with the rows it describes.
 */
@Entity({ tableName: 'marketplace_audit' })
@Index({ name: 'marketplace_audit_subject_index', properties: ['accountId', 'mode', 'subjectType', 'subjectId', 'createdAt', 'id'] })
export class MarketplaceAudit {
  [OptionalProps]?: 'id' | 'createdAt' | 'reason' | 'from';

  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @Property({ type: 'uuid' })
  accountId!: string;

  @Property({ type: 'string', length: 4 })
  mode!: Mode;

  /** Id of the API key (or the platform itself, e.g. `system` for a deadline) that made the change. */
  @Property({ type: 'string', length: 100 })
  actor!: string;

  /** job_posting, job_application, tender, bid, ... */
  @Property({ type: 'string', length: 32 })
  subjectType!: string;

  @Property({ type: 'uuid' })
  subjectId!: string;

  /** The state before the change; null when the subject was created by it. */
  @Property({ type: 'string', length: 64, nullable: true })
  from?: string | null;

  @Property({ type: 'string', length: 64 })
  to!: string;

  @Property({ type: 'text', nullable: true })
  reason?: string | null;

  @Property({ type: 'datetime' })
  createdAt: Date = new Date();
}
