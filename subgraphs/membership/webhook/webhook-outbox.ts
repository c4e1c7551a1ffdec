import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Mode } from '../../../core/principal.js';
import { ChatWebhookDelivery } from './chat-webhook-delivery.entity.js';
import { ChatWebhook } from './chat-webhook.entity.js';
import type { WebhookEventType } from './webhook-event-type.js';

/**
 * Writes one outbox row per enabled endpoint of the account and mode that takes `type`, through
 * `em`: call it inside the transaction of the change, so the event commits (or not) with it.
 */
export async function enqueueWebhookEvent(
  em: EntityManager,
  scope: { accountId: string; mode: Mode },
  type: WebhookEventType,
  data: Record<string, unknown>,
): Promise<void> {
  await enqueueWebhookEvents(em, scope, type, [data]);
}

/** Several events of one type and scope (one per item of `data`), with one read of the endpoints. */
export async function enqueueWebhookEvents(
  em: EntityManager,
  scope: { accountId: string; mode: Mode },
  type: WebhookEventType,
  data: readonly Record<string, unknown>[],
): Promise<void> {
  if (!data.length) return;
  const endpoints = await em.find(ChatWebhook, { accountId: scope.accountId, mode: scope.mode, disabledAt: null, eventTypes: { $contains: [type] } }, { fields: ['id'] });
  if (!endpoints.length) return;
  for (const item of data) {
    const eventId = `msg_${randomUUID().replace(/-/g, '')}`;
    const payload = JSON.stringify({ type, timestamp: new Date().toISOString(), data: { ...item, livemode: scope.mode === 'live' } });
    for (const endpoint of endpoints) {
      em.create(ChatWebhookDelivery, { webhookId: endpoint.id, accountId: scope.accountId, mode: scope.mode, eventId, eventType: type, payload });
    }
  }
}
