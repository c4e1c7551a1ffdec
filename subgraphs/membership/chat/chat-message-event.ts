import type { Principal } from '../../../core/principal.js';
import type { ChatMessageMode } from './chat-message-mode.js';

/**
 * What is published when a message is sent: its id, and enough to filter subscribers without
 * a query. Subscribers load the message themselves, after checking they may still see it.
 */
export interface ChatMessageEvent {
  messageId: string;
  kind: ChatMessageMode;
  channelId: string | null;
  senderId: string;
  recipientId: string | null;
}

/** One topic per account and mode: the pubsub keeps publish order within a topic. */
export function chatTopic(principal: Pick<Principal, 'accountId' | 'mode'>): string {
  return `chat:${principal.accountId}:${principal.mode}`;
}
