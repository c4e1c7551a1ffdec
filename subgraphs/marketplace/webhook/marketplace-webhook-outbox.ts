import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Mode } from '../../../core/principal.js';
import { MarketplaceWebhookEvent } from './marketplace-webhook-event.entity.js';

/** The marketplace's webhook event types (the membership subgraph keeps the endpoints that take them). */
export type MarketplaceWebhookEventType = 'application.status_changed' | 'tender.period_closed' | 'tender.awarded';

/** Raises an event for the account's endpoints in `em`'s transaction: it commits, and is relayed, with the change. */
export function raiseWebhookEvent(em: EntityManager, scope: { accountId: string; mode: Mode }, type: MarketplaceWebhookEventType, data: Record<string, unknown>): void {
  em.create(MarketplaceWebhookEvent, { accountId: scope.accountId, mode: scope.mode, eventId: `mkt_${randomUUID().replace(/-/g, '')}`, type, data });
}
