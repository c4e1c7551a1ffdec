import { randomUUID } from 'node:crypto';
import { OptionalProps } from '@mikro-orm/core';
import { Entity, Index, PrimaryKey, Property, Unique } from '@mikro-orm/decorators/legacy';
import type { Mode } from '../../../core/principal.js';

/**
 * One event the marketplace raised for an account's webhook endpoints, written in the transaction
 * of the change it tells of. The endpoints are the membership subgraph's: the marketplace clock
 * relays each row there (marketplace-clock.worker.ts) and marks it relayed, so an event is neither
 * lost with a crash nor delivered twice under two ids.
 */
@Entity({ tableName: 'webhook_event' })
@Unique({ name: 'webhook_event_event_id_unique', properties: ['eventId'] })
@Index({ name: 'webhook_event_due_index', expression: 'create index "webhook_event_due_index" on "marketplace"."webhook_event" ("next_attempt_at") where "relayed_at" is null' })
export class MarketplaceWebhookEvent {
  [OptionalProps]?: 'id' | 'occurredAt' | 'relayedAt' | 'attempts' | 'nextAttemptAt' | 'lastError';

  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @Property({ type: 'uuid' })
  accountId!: string;

  @Property({ type: 'string', length: 4 })
  mode!: Mode;

  /** The webhook-id its deliveries carry, the same however often it is relayed. */
  @Property({ type: 'string', length: 40 })
  eventId!: string;

  @Property({ type: 'string', length: 40 })
  type!: string;

  @Property({ type: 'json' })
  data!: Record<string, unknown>;

  @Property({ type: 'datetime' })
  occurredAt: Date = new Date();

  @Property({ type: 'datetime', nullable: true })
  relayedAt?: Date | null = null;

  @Property({ type: 'integer' })
  attempts: number = 0;

  @Property({ type: 'datetime' })
  nextAttemptAt: Date = new Date();

  @Property({ type: 'string', length: 500, nullable: true })
  lastError?: string | null = null;
}
