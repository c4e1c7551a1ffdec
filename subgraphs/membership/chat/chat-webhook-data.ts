import type { ChatChannel } from './chat-channel.entity.js';
import type { ChatMessage } from './chat-message.entity.js';

/** A message as webhook deliveries carry it: the GraphQL field names, ids for related objects. */
export function messageWebhookData(message: ChatMessage): Record<string, unknown> {
  return {
    id: message.id,
    mode: message.kind.toUpperCase(),
    text: message.text,
    channelId: message.channelId ?? null,
    senderId: message.senderId,
    recipientId: message.recipientId ?? null,
    createdAt: message.createdAt.toISOString(),
    editedAt: message.editedAt?.toISOString() ?? null,
    deletedAt: message.deletedAt?.toISOString() ?? null,
  };
}

/** A channel as webhook deliveries carry it. */
export function channelWebhookData(channel: ChatChannel, memberIds: string[]): Record<string, unknown> {
  return {
    id: channel.id,
    name: channel.name,
    description: channel.description ?? null,
    visibility: channel.visibility.toUpperCase(),
    createdById: channel.createdById,
    memberIds,
    createdAt: channel.createdAt.toISOString(),
  };
}
