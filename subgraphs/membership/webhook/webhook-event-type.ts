/** The events an endpoint may subscribe to; names follow Standard Webhooks' `resource.action`. */
export const WEBHOOK_EVENT_TYPES = [
  'message.created',
  'message.updated',
  'message.deleted',
  'channel.created',
  'channel.member_joined',
  'channel.member_left',
  'member.created',
  'member.renewed',
  'member.lapsed',
  'member.renewal_due',
  'invoice.paid',
  'invoice.refunded',
  'registration.confirmed',
  'registration.waitlisted',
  'registration.promoted',
  'application.status_changed',
  'tender.period_closed',
  'tender.awarded',
] as const;

export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** The events the marketplace subgraph raises and relays here (webhook-relay.resolver.ts): its own outbox, this delivery. */
export const RELAYED_EVENT_TYPES: readonly WebhookEventType[] = ['application.status_changed', 'tender.period_closed', 'tender.awarded'];

export function isWebhookEventType(value: string): value is WebhookEventType {
  return (WEBHOOK_EVENT_TYPES as readonly string[]).includes(value);
}
