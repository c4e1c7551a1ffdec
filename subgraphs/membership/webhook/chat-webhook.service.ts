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
