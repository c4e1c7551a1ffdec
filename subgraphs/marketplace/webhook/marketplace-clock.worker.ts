import type { MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import { signPrincipal, PRINCIPAL_HEADER, type Mode } from '../../../core/principal.js';
import { dueTenderIds, settleDue } from '../tender/tender-clock.js';

/** The key id the membership subgraph accepts relayed events from (its webhook-relay.resolver.ts). */
export const WEBHOOK_RELAY_KEY_ID = 'system:marketplace-webhook-relay';

const RELAY = `mutation($eventId: String!, $type: String!, $timestamp: String!, $data: JSONObject!) {
  relayWebhookEvent(eventId: $eventId, type: $type, timestamp: $timestamp, data: $data)
}`;

export interface MarketplaceClockOptions {
  /** The membership subgraph's GraphQL endpoint, where the account's webhook endpoints live. */
  membershipUrl: string | (() => string);
  internalSecret: string;
  /** Pause between runs (default a second: the outbox is read by a partial index, tenders by theirs). */
  intervalMs?: number;
  batchSize?: number;
  logger?: Logger;
}

interface DueEvent {
  id: string;
  account_id: string;
  mode: Mode;
  event_id: string;
  type: string;
  data: Record<string, unknown>;
  occurred_at: Date;
  attempts: number;
}

/**
 * What passes in the marketplace without a request: tenders whose deadline passed are settled
 * (so `tender.period_closed` is raised when the period closes, not when someone next looks), and
 * the webhook events raised in the marketplace's transactions are relayed to the membership
 * subgraph, which delivers them. Events are claimed with `FOR UPDATE SKIP LOCKED` and a lease, so
 * instances share the work; a relay that fails is tried again (5 s, doubling to 10 min), and the
 * membership side takes an event id once, so a relay repeated after a lost answer adds nothing.
 */
export class MarketplaceClockWorker {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = true;

  constructor(
    private readonly orm: MikroORM,
    private readonly options: MarketplaceClockOptions,
  ) {}

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    const tick = () => {
      this.running = this.runOnce()
        .then(() => undefined)
        .catch((error) => this.options.logger?.error({ err: error }, 'marketplace clock run failed'))
        .finally(() => {
          if (!this.stopped) this.timer = setTimeout(tick, this.options.intervalMs ?? 1000);
        });
    };
    tick();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  /** Settles due tenders, then relays due events; answers how many of each. */
  async runOnce(): Promise<{ settled: number; relayed: number; failed: number }> {
    let settled = 0;
    for (const mode of ['live', 'test'] as const) {
      const em = this.orm.em.fork();
      const due = await dueTenderIds(em, mode);
      await settleDue(em, due);
      settled += due.length;
    }
    const claimed = await this.orm.em.getConnection().execute<DueEvent[]>(
      `update "marketplace"."webhook_event" set "next_attempt_at" = now() + interval '1 minute'
        where "id" in (
          select "id" from "marketplace"."webhook_event" where "relayed_at" is null and "next_attempt_at" <= now()
           order by "next_attempt_at" limit ? for update skip locked)
        returning "id", "account_id", "mode", "event_id", "type", "data", "occurred_at", "attempts"`,
      [this.options.batchSize ?? 50],
    );
    let relayed = 0;
    let failed = 0;
    for (const event of claimed) {
      const error = await this.relay(event);
      if (error === null) relayed++;
      else failed++;
      const delaySeconds = Math.min(5 * 2 ** event.attempts, 600);
      await this.orm.em.getConnection().execute(
        error === null
          ? `update "marketplace"."webhook_event" set "relayed_at" = now(), "attempts" = "attempts" + 1, "last_error" = null where "id" = ?`
          : `update "marketplace"."webhook_event" set "attempts" = "attempts" + 1, "last_error" = ?, "next_attempt_at" = now() + (? * interval '1 second') where "id" = ?`,
        error === null ? [event.id] : [error.slice(0, 500), delaySeconds, event.id],
      );
    }
    return { settled, relayed, failed };
  }

  /** Sends one event to the membership subgraph as the account's relay; null when it was taken, else why not. */
  private async relay(event: DueEvent): Promise<string | null> {
    const url = typeof this.options.membershipUrl === 'function' ? this.options.membershipUrl() : this.options.membershipUrl;
    const principal = signPrincipal({ accountId: event.account_id, account: event.account_id, keyId: WEBHOOK_RELAY_KEY_ID, kind: event.mode, mode: event.mode }, this.options.internalSecret);
    try {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', [PRINCIPAL_HEADER]: principal },
        body: JSON.stringify({ query: RELAY, variables: { eventId: event.event_id, type: event.type, timestamp: new Date(event.occurred_at).toISOString(), data: event.data } }),
        signal: AbortSignal.timeout(10_000),
      });
      const body = (await response.json().catch(() => null)) as { data?: { relayWebhookEvent?: boolean }; errors?: { message: string }[] } | null;
      if (body?.data?.relayWebhookEvent === true) return null;
      return body?.errors?.[0]?.message ?? `HTTP ${response.status}`;
    } catch (error) {
      return error instanceof Error ? error.message : String(error);
    }
  }
}
