import type { EntityManager } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import type { Principal } from '../../../core/principal.js';
import { paginate, UUID, type Page } from '../../shared/pagination.js';
import { ChatWebhookAttempt } from './chat-webhook-attempt.entity.js';
import { ChatWebhookDelivery } from './chat-webhook-delivery.entity.js';
import { ChatWebhook } from './chat-webhook.entity.js';
import type { ChatWebhookDeliveriesArgs, ChatWebhooksArgs, CreateChatWebhookArgs } from './chat-webhook.inputs.js';
import type { CreatedChatWebhook } from './created-chat-webhook.type.js';
import { checkWebhookTarget, WebhookTargetError } from '../../shared/ssrf-guard.js';
import { isWebhookEventType } from './webhook-event-type.js';
import { newWebhookSecret } from './webhook-signature.js';
import type { WebhookSettings } from './webhook-settings.js';
import { UnknownEventTypeError, WebhookNotFoundError, WebhookUrlRefusedError } from './webhook.errors.js';

/** The account's webhook endpoints and their delivery log; endpoints belong to the account, not to a member. */
export class ChatWebhookService {
  constructor(
    private readonly em: EntityManager,
    private readonly principal: Principal,
    private readonly settings: WebhookSettings,
    private readonly log?: Logger,
  ) {}

  private get scope() {
    return { accountId: this.principal.accountId, mode: this.principal.mode };
  }

  /** Registers an endpoint after checking its URL (scheme, and no private address) and event types. */
  async create(args: CreateChatWebhookArgs): Promise<CreatedChatWebhook> {
    for (const type of args.eventTypes) if (!isWebhookEventType(type)) throw new UnknownEventTypeError(type);
    let url: URL;
    try {
      url = await checkWebhookTarget(args.url, this.settings.allowPrivateTargets);
    } catch (error) {
      if (error instanceof WebhookTargetError) {
        if (error.detail) this.log?.warn({ detail: error.detail }, 'webhook target refused');
        throw new WebhookUrlRefusedError(error.message);
      }
      throw error;
    }
    const secret = newWebhookSecret();
    const webhook = this.em.create(ChatWebhook, {
      ...this.scope,
      url: url.toString(),
      eventTypes: [...new Set(args.eventTypes)],
      description: args.description ?? null,
      secret,
    });
    await this.em.flush();
    return { webhook, secret };
  }

  list(args: ChatWebhooksArgs): Promise<Page<ChatWebhook>> {
    return paginate(this.em, ChatWebhook, [this.scope], args);
  }

  async find(id: string): Promise<ChatWebhook | null> {
    return UUID.test(id) ? this.em.findOne(ChatWebhook, { id, ...this.scope }) : null;
  }

  private async get(id: string): Promise<ChatWebhook> {
    const webhook = await this.find(id);
    if (!webhook) throw new WebhookNotFoundError(id, 'id');
    return webhook;
  }

  /** Stops deliveries to the endpoint (its pending ones fail as "endpoint disabled") until it is enabled again. */
  async disable(id: string): Promise<ChatWebhook> {
    const webhook = await this.get(id);
    if (!webhook.disabledAt) {
      webhook.disabledAt = new Date();
      webhook.disabledReason = 'disabled';
      await this.em.flush();
    }
    return webhook;
  }

  /** Delivers to the endpoint again, also one the platform disabled (gone, failing), with a clean failure record. */
  async enable(id: string): Promise<ChatWebhook> {
    const webhook = await this.get(id);
    webhook.disabledAt = null;
    webhook.disabledReason = null;
    webhook.failingSince = null;
    await this.em.flush();
    return webhook;
  }

  /**
   * A new signing secret, shown once. The old one keeps signing beside it (the signature header
   * carries both, as Standard Webhooks allows) for `expireOldAfterHours`, so receivers can switch
   * without missing a delivery.
   */
  async rotateSecret(id: string, expireOldAfterHours = 24): Promise<CreatedChatWebhook> {
    const webhook = await this.get(id);
    webhook.previousSecret = expireOldAfterHours > 0 ? webhook.secret : null;
    webhook.previousSecretExpiresAt = expireOldAfterHours > 0 ? new Date(Date.now() + expireOldAfterHours * 3_600_000) : null;
    webhook.secret = newWebhookSecret();
    await this.em.flush();
    return { webhook, secret: webhook.secret };
  }

  /** Removes the endpoint with its delivery log; nothing more is delivered to it. */
  async delete(id: string): Promise<{ id: string; deleted: boolean }> {
    const webhook = await this.get(id);
    await this.em.transactional(async (em) => {
      await em.nativeDelete(ChatWebhookAttempt, { webhookId: webhook.id });
      await em.nativeDelete(ChatWebhookDelivery, { webhookId: webhook.id });
      await em.nativeDelete(ChatWebhook, { id: webhook.id });
    });
    return { id: webhook.id, deleted: true };
  }

  /** An endpoint's deliveries, newest first. */
  async deliveries(args: ChatWebhookDeliveriesArgs): Promise<Page<ChatWebhookDelivery>> {
    const webhook = UUID.test(args.webhookId) ? await this.em.findOne(ChatWebhook, { id: args.webhookId, ...this.scope }) : null;
    if (!webhook) throw new WebhookNotFoundError(args.webhookId);
    return paginate(this.em, ChatWebhookDelivery, [{ webhookId: webhook.id }], args);
  }

  /** Attempts of many deliveries in one statement, in attempt order. */
  async attemptsOf(deliveryIds: readonly string[]): Promise<ChatWebhookAttempt[][]> {
    const rows = await this.em.find(ChatWebhookAttempt, { deliveryId: { $in: [...deliveryIds] } }, { orderBy: { attempt: 'asc' } });
    return deliveryIds.map((id) => rows.filter((row) => row.deliveryId === id));
  }
}
