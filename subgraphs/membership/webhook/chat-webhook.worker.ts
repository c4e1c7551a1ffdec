import http from 'node:http';
import https from 'node:https';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import { ChatWebhookAttempt } from './chat-webhook-attempt.entity.js';
import { ChatWebhookDeliveryStatus } from './chat-webhook-delivery-status.js';
import { ChatWebhookDelivery } from './chat-webhook-delivery.entity.js';
import { ChatWebhook } from './chat-webhook.entity.js';
import { guardedLookup, refuseLiteralPrivateHost, WebhookTargetError } from '../../shared/ssrf-guard.js';
import { signWebhook } from './webhook-signature.js';
import { DEFAULT_WEBHOOK_SETTINGS, type WebhookSettings } from './webhook-settings.js';

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/** Waits after failed attempts 1, 2, 3…: Svix's schedule, about 28 hours over 8 attempts. */
export const DEFAULT_RETRY_SCHEDULE_MS = [5 * SECOND, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 5 * HOUR, 10 * HOUR, 10 * HOUR];

export interface ChatWebhookWorkerOptions {
  settings?: WebhookSettings;
  /** Delay after each failed attempt; once used up, the delivery fails. Tests shrink it. */
  retryScheduleMs?: number[];
  /** An endpoint failing without a success for this long is disabled (default 5 days). */
  disableAfterMs?: number;
  pollIntervalMs?: number;
  batchSize?: number;
  logger?: Logger;
}

interface Outcome {
  statusCode: number | null;
  error: string | null;
  durationMs: number;
}

/**
 * Sends the webhook outbox. Each poll claims due deliveries with `FOR UPDATE SKIP LOCKED` and
 * pushes their next attempt time past the request timeout (a lease) in the same statement, so
 * several workers (instances) share the work and a worker that dies mid-request only delays a
 * delivery: at-least-once. Receivers deduplicate by the webhook-id header.
 */
export class ChatWebhookWorker {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = true;
  private readonly settings: WebhookSettings;
  private readonly schedule: number[];
  private readonly disableAfterMs: number;
  private readonly pollIntervalMs: number;
  private readonly batchSize: number;

  constructor(
    private readonly orm: MikroORM,
    private readonly options: ChatWebhookWorkerOptions = {},
  ) {
    this.settings = options.settings ?? DEFAULT_WEBHOOK_SETTINGS;
    this.schedule = options.retryScheduleMs ?? DEFAULT_RETRY_SCHEDULE_MS;
    this.disableAfterMs = options.disableAfterMs ?? 5 * 24 * HOUR;
    this.pollIntervalMs = options.pollIntervalMs ?? SECOND;
    this.batchSize = options.batchSize ?? 20;
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    const tick = () => {
      this.running = this.runOnce()
        .then(() => undefined)
        .catch((error) => this.options.logger?.error({ err: error }, 'webhook delivery poll failed'))
        .finally(() => {
          if (!this.stopped) this.timer = setTimeout(tick, this.pollIntervalMs);
        });
    };
    tick();
  }

  /** Stops polling and waits for the attempts in flight. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  /** Claims and sends the deliveries due now; returns how many were attempted. */
  async runOnce(): Promise<number> {
    const leaseMs = this.settings.timeoutMs + 30 * SECOND;
    const claimed = (await this.orm.em.getConnection().execute(
      `update "membership"."chat_webhook_delivery" set "next_attempt_at" = now() + (? * interval '1 millisecond')
       where "id" in (
         select "id" from "membership"."chat_webhook_delivery"
         where "status" = 'pending' and "next_attempt_at" <= now()
         order by "next_attempt_at" limit ? for update skip locked)
       returning "id"`,
      [leaseMs, this.batchSize],
    )) as { id: string }[];
    await Promise.all(claimed.map(({ id }) => this.deliver(id)));
    return claimed.length;
  }

  private async deliver(id: string): Promise<void> {
    const em = this.orm.em.fork();
    const delivery = await em.findOneOrFail(ChatWebhookDelivery, { id });
    const webhook = await em.findOne(ChatWebhook, { id: delivery.webhookId });
    if (!webhook || webhook.disabledAt) {
      await this.finish(em, delivery, ChatWebhookDeliveryStatus.FAILED, 'endpoint disabled');
      return;
    }
    const outcome = await this.post(webhook, delivery);
    await em.transactional(async (tx) => {
      const attempt = delivery.attempts + 1;
      delivery.attempts = attempt;
      delivery.lastStatusCode = outcome.statusCode;
      delivery.lastError = outcome.error;
      tx.create(ChatWebhookAttempt, { deliveryId: delivery.id, webhookId: webhook.id, attempt, ...outcome });
      const now = new Date();
      if (outcome.statusCode !== null && outcome.statusCode >= 200 && outcome.statusCode < 300) {
        delivery.status = ChatWebhookDeliveryStatus.SUCCEEDED;
        delivery.completedAt = now;
        webhook.failingSince = null;
      } else if (outcome.statusCode === 410) {
        // 410 Gone: the receiver asks for no more deliveries.
        delivery.status = ChatWebhookDeliveryStatus.FAILED;
        delivery.completedAt = now;
        webhook.disabledAt = now;
        webhook.disabledReason = 'gone';
      } else {
        webhook.failingSince ??= now;
        if (attempt > this.schedule.length) {
          delivery.status = ChatWebhookDeliveryStatus.FAILED;
          delivery.completedAt = now;
        } else {
          delivery.nextAttemptAt = new Date(now.getTime() + this.schedule[attempt - 1]);
        }
        if (now.getTime() - webhook.failingSince.getTime() >= this.disableAfterMs) {
          webhook.disabledAt = now;
          webhook.disabledReason = 'failing';
        }
      }
      tx.persist([delivery, webhook]);
    });
  }

  private async finish(em: EntityManager, delivery: ChatWebhookDelivery, status: ChatWebhookDeliveryStatus, error: string): Promise<void> {
    delivery.status = status;
    delivery.lastError = error;
    delivery.completedAt = new Date();
    await em.flush();
  }

  /** One signed POST; never throws: what went wrong is the outcome. */
  private async post(webhook: ChatWebhook, delivery: ChatWebhookDelivery): Promise<Outcome> {
    const started = performance.now();
    const timestamp = Math.floor(Date.now() / 1000);
    const body = delivery.payload;
    const signal = AbortSignal.timeout(this.settings.timeoutMs);
    const elapsed = () => Math.round(performance.now() - started);
    try {
      const url = new URL(webhook.url);
      refuseLiteralPrivateHost(url, this.settings.allowPrivateTargets);
      const statusCode = await new Promise<number>((resolve, reject) => {
        const request = (url.protocol === 'https:' ? https : http).request(
          url,
          {
            method: 'POST',
            agent: false,
            signal,
            lookup: guardedLookup(this.settings.allowPrivateTargets) as never,
            headers: {
              'content-type': 'application/json',
              'content-length': Buffer.byteLength(body),
              'user-agent': 'membership-platform-webhooks/1',
              'webhook-id': delivery.eventId,
              'webhook-timestamp': String(timestamp),
              // Both secrets while a rotation's overlap lasts: the receiver accepts either (space-separated, Standard Webhooks).
              'webhook-signature': [webhook.secret, ...(webhook.previousSecret && webhook.previousSecretExpiresAt && webhook.previousSecretExpiresAt > new Date() ? [webhook.previousSecret] : [])]
                .map((secret) => signWebhook(secret, delivery.eventId, timestamp, body))
                .join(' '),
            },
          },
          (response) => {
            // Redirects are not followed: a 3xx is a failed attempt, like any other non-2xx.
            response.resume();
            response.on('end', () => resolve(response.statusCode ?? 0));
            response.on('error', reject);
          },
        );
        request.on('error', reject);
        request.end(body);
      });
      return { statusCode, error: statusCode >= 200 && statusCode < 300 ? null : `HTTP ${statusCode}`, durationMs: elapsed() };
    } catch (error) {
      // The delivery log is the tenant's to read: what the host resolved to goes to our log only.
      if (error instanceof WebhookTargetError) this.options.logger?.warn({ webhookId: webhook.id, detail: error.detail }, 'webhook target refused');
      const message = signal.aborted ? `timed out after ${this.settings.timeoutMs} ms` : error instanceof Error ? error.message : String(error);
      return { statusCode: null, error: message.slice(0, 500), durationMs: elapsed() };
    }
  }
}
