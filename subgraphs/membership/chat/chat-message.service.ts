import { LockMode, type FilterQuery } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Principal } from '../../../core/principal.js';
import type { PlatformPubSub } from '../../shared/pubsub.js';
import { paginate, UUID, type Page } from '../../shared/pagination.js';
import { ChatAccess } from './chat-access.js';
import { ChatChannelVisibility } from './chat-channel-visibility.js';
import { ChatChannel } from './chat-channel.entity.js';
import { chatTopic, type ChatMessageEvent } from './chat-message-event.js';
import { ChatMessageMode } from './chat-message-mode.js';
import { ChatMessageRevision } from './chat-message-revision.entity.js';
import { ChatMessage, conversationKey } from './chat-message.entity.js';
import { ChatRevisionAction } from './chat-revision-action.js';
import {
  ChannelNotFoundError,
  ChatTargetError,
  MAX_MESSAGE_LENGTH,
  MessageDeletedError,
  MessageEmptyError,
  MessageNotFoundError,
  MessageTooLongError,
  NotChannelMemberError,
  NotMessageSenderError,
  UnknownMemberError,
  UnknownRecipientError,
} from './chat.errors.js';
import { enqueueWebhookEvent } from '../webhook/webhook-outbox.js';
import type { WebhookEventType } from '../webhook/webhook-event-type.js';
import { messageWebhookData } from './chat-webhook-data.js';
import type { ChatMessagesArgs, DeleteChatMessageArgs, EditChatMessageArgs, SendChatMessageArgs } from './chat.inputs.js';

function checkText(text: string): string {
  if (text.length > MAX_MESSAGE_LENGTH) throw new MessageTooLongError(text.length);
  if (!/\S/.test(text)) throw new MessageEmptyError();
  return text;
}

/** Chat messages of the principal's account and mode, sent and read as the acting member. */
export class ChatMessageService {
  private readonly access: ChatAccess;

  constructor(
    private readonly em: EntityManager,
    private readonly principal: Principal,
    private readonly pubsub?: PlatformPubSub,
  ) {
    this.access = new ChatAccess(em, principal);
  }

  /** A channel's messages, a direct conversation's, or the broadcasts: newest first. */
  async list(args: ChatMessagesArgs): Promise<Page<ChatMessage>> {
    const member = await this.access.activeMember(args.asMember);
    const targets = [args.channelId, args.withMember, args.broadcasts ? true : null].filter((t) => t != null);
    if (targets.length !== 1) {
      throw new ChatTargetError('channelId', 'Give exactly one of channelId, withMember or broadcasts: true');
    }
    const where: FilterQuery<ChatMessage>[] = [this.access.scope];
    if (args.channelId) {
      const channel = await this.access.visibleChannel(args.channelId, member.id);
      where.push({ channelId: channel.id });
    } else if (args.withMember) {
      const other = await this.access.anyMember(args.withMember);
      if (!other) throw new UnknownMemberError('withMember', args.withMember);
      where.push({ conversationKey: conversationKey(member.id, other.id) });
    } else {
      where.push({ kind: ChatMessageMode.BROADCAST });
    }
    return paginate(this.em, ChatMessage, where, args);
  }

  /** One message, or null when it does not exist or the acting member may not read it. */
  async find(asMember: string, id: string): Promise<ChatMessage | null> {
    const member = await this.access.activeMember(asMember);
    if (!UUID.test(id)) return null;
    const message = await this.em.findOne(ChatMessage, { id, ...this.access.scope });
    return message && (await this.access.mayRead(message, member.id)) ? message : null;
  }

  /**
   * Sends a message and, once it is committed, publishes it to subscribers. A channel message
   * locks its channel row: sends to one channel are serialised, so their times strictly
   * increase in the order they commit and are published.
   */
  async send(args: SendChatMessageArgs): Promise<ChatMessage> {
    const sender = await this.access.activeMember(args.asMember);
    const text = checkText(args.text);
    let message: ChatMessage;
    switch (args.mode) {
      case ChatMessageMode.DIRECT: {
        if (args.channelId) throw new ChatTargetError('channelId', 'A DIRECT message takes `to`, not channelId');
        if (!args.to) throw new ChatTargetError('to', 'A DIRECT message needs `to`, the recipient member');
        const recipient = await this.access.anyMember(args.to);
        if (!recipient || recipient.deletedAt) throw new UnknownRecipientError(args.to);
        message = await this.em.transactional(async (em) => {
          const created = em.create(ChatMessage, {
            ...this.access.scope,
            kind: ChatMessageMode.DIRECT,
            senderId: sender.id,
            recipientId: recipient.id,
            conversationKey: conversationKey(sender.id, recipient.id),
            text,
          });
          await this.outbox(em, 'message.created', created);
          await em.flush();
          return created;
        });
        break;
      }
      case ChatMessageMode.CHANNEL: {
        if (args.to) throw new ChatTargetError('to', 'A CHANNEL message takes channelId, not `to`');
        if (!args.channelId) throw new ChatTargetError('channelId', 'A CHANNEL message needs channelId');
        const channelId = args.channelId;
        if (!UUID.test(channelId)) throw new ChannelNotFoundError(channelId);
        message = await this.em.transactional(async (em) => {
          const access = new ChatAccess(em, this.principal);
          const channel = await em.findOne(ChatChannel, { id: channelId, ...access.scope }, { lockMode: LockMode.PESSIMISTIC_WRITE });
          if (!channel) throw new ChannelNotFoundError(channelId);
          if (!(await access.isChannelMember(channel.id, sender.id))) {
            // A private channel of others does not exist for this member.
            if (channel.visibility === ChatChannelVisibility.PRIVATE) throw new ChannelNotFoundError(channelId);
            throw new NotChannelMemberError(channelId);
          }
          const now = Date.now();
          const last = channel.lastMessageAt?.getTime() ?? 0;
          const createdAt = new Date(Math.max(now, last + 1));
          channel.lastMessageAt = createdAt;
          const created = em.create(ChatMessage, {
            ...access.scope,
            kind: ChatMessageMode.CHANNEL,
            channelId: channel.id,
            senderId: sender.id,
            text,
            createdAt,
          });
          await this.outbox(em, 'message.created', created);
          await em.flush();
          return created;
        });
        break;
      }
      case ChatMessageMode.BROADCAST: {
        if (args.to) throw new ChatTargetError('to', 'A BROADCAST message goes to every member; it takes no `to`');
        if (args.channelId) throw new ChatTargetError('channelId', 'A BROADCAST message goes to every member; it takes no channelId');
        message = await this.em.transactional(async (em) => {
          const created = em.create(ChatMessage, { ...this.access.scope, kind: ChatMessageMode.BROADCAST, senderId: sender.id, text });
          await this.outbox(em, 'message.created', created);
          await em.flush();
          return created;
        });
        break;
      }
    }
    const event: ChatMessageEvent = {
      messageId: message.id,
      kind: message.kind,
      channelId: message.channelId ?? null,
      senderId: message.senderId,
      recipientId: message.recipientId ?? null,
    };
    this.pubsub?.publish(chatTopic(this.principal), event);
    return message;
  }

  /** Replaces the text; the previous text is kept as an EDIT revision. Only the sender may edit. */
  async edit(args: EditChatMessageArgs): Promise<ChatMessage> {
    const text = checkText(args.text);
    return this.change(args.asMember, args.id, (message, em) => {
      em.create(ChatMessageRevision, { messageId: message.id, memberId: message.senderId, action: ChatRevisionAction.EDIT, text: message.text ?? '' });
      message.text = text;
      message.editedAt = new Date();
    });
  }

  /** Deletes the message: readers see it without text; its last text stays in a DELETE revision. */
  async delete(args: DeleteChatMessageArgs): Promise<ChatMessage> {
    return this.change(args.asMember, args.id, (message, em) => {
      em.create(ChatMessageRevision, { messageId: message.id, memberId: message.senderId, action: ChatRevisionAction.DELETE, text: message.text ?? '' });
      message.text = null;
      message.deletedAt = new Date();
    });
  }

  /** The webhook outbox rows of a change, in its transaction. */
  private outbox(em: EntityManager, type: WebhookEventType, message: ChatMessage): Promise<void> {
    return enqueueWebhookEvent(em, this.access.scope, type, messageWebhookData(message));
  }

  private async change(asMember: string, id: string, apply: (message: ChatMessage, em: EntityManager) => void): Promise<ChatMessage> {
    const member = await this.access.activeMember(asMember);
    if (!UUID.test(id)) throw new MessageNotFoundError(id);
    return this.em.transactional(async (em) => {
      const message = await em.findOne(ChatMessage, { id, ...this.access.scope }, { lockMode: LockMode.PESSIMISTIC_WRITE });
      if (!message || !(await new ChatAccess(em, this.principal).mayRead(message, member.id))) throw new MessageNotFoundError(id);
      if (message.senderId !== member.id) throw new NotMessageSenderError();
      if (message.deletedAt) throw new MessageDeletedError(id);
      apply(message, em);
      await this.outbox(em, message.deletedAt ? 'message.deleted' : 'message.updated', message);
      await em.flush();
      return message;
    });
  }
}
