/** The events an endpoint may subscribe to; names follow Standard Webhooks' `resource.action`. */
export const WEBHOOK_EVENT_TYPES = [
  'message.created',
  'message.updated',
  'message.deleted',
  'channel.created',
  'channel.member_joined',
  'channel.member_left',
  'member.renewal_due',
] as const;

export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

export function isWebhookEventType(value: string): value is WebhookEventType {
  return (WEBHOOK_EVENT_TYPES as readonly string[]).includes(value);
}
