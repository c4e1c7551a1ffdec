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
  await enqueueEvents(em, scope, type, data.map((item) => ({ data: item })));
}

/**
 * An event another subgraph raised, under the id and time it gave it: a relay that repeats it
 * (its acknowledgement lost) finds the event delivered already and adds nothing.
 */
export async function enqueueRelayedEvent(
  em: EntityManager,
  scope: { accountId: string; mode: Mode },
  type: WebhookEventType,
  event: { eventId: string; timestamp: string; data: Record<string, unknown> },
): Promise<void> {
  if (await em.count(ChatWebhookDelivery, { accountId: scope.accountId, mode: scope.mode, eventId: event.eventId })) return;
  await enqueueEvents(em, scope, type, [event]);
}

async function enqueueEvents(
  em: EntityManager,
  scope: { accountId: string; mode: Mode },
  type: WebhookEventType,
  events: readonly { data: Record<string, unknown>; eventId?: string; timestamp?: string }[],
): Promise<void> {
  if (!events.length) return;
  const endpoints = await em.find(ChatWebhook, { accountId: scope.accountId, mode: scope.mode, disabledAt: null, eventTypes: { $contains: [type] } }, { fields: ['id'] });
  if (!endpoints.length) return;
  for (const event of events) {
    const eventId = event.eventId ?? `msg_${randomUUID().replace(/-/g, '')}`;
    const payload = JSON.stringify({ type, timestamp: event.timestamp ?? new Date().toISOString(), data: { ...event.data, livemode: scope.mode === 'live' } });
    for (const endpoint of endpoints) {
      em.create(ChatWebhookDelivery, { webhookId: endpoint.id, accountId: scope.accountId, mode: scope.mode, eventId, eventType: type, payload });
    }
  }
}
