import type { MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import { releaseOverdueRegistrations } from '../event/registration-expiry.js';
import { registrationInvoicing } from '../finance/invoice/registration-invoicing.js';
import { DEFAULT_MEMBERSHIP_SETTINGS, type MembershipSettings } from '../member/membership-settings.js';
import { sendRenewalReminders } from '../member/renewal-reminders.js';
import { sendLapseNotices } from '../member/lapse-notices.js';

export interface MembershipClockOptions {
  settings?: MembershipSettings;
  /** Pause between sweeps (default a minute). */
  intervalMs?: number;
  logger?: Logger;
}

/**
 * What the calendar does to members without anyone asking: a member's period coming to its end
 * (`member.renewal_due`) or its grace running out (`member.lapsed`), a paid event's place whose invoice was not paid in time going back to
 * the waitlist (registrations do that too for their own event, before taking a place). Statuses themselves are computed from dates on every read; this only
 * sends what a date passing should tell. Every membership instance runs one, and each sweep
 * claims its rows in the statement that marks them, so instances share the work without
 * sending anything twice.
 */
export class MembershipClockWorker {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = true;
  private readonly settings: MembershipSettings;
  private readonly intervalMs: number;

  constructor(
    private readonly orm: MikroORM,
    private readonly options: MembershipClockOptions = {},
  ) {
    this.settings = options.settings ?? DEFAULT_MEMBERSHIP_SETTINGS;
    this.intervalMs = options.intervalMs ?? 60_000;
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    const tick = () => {
      this.running = this.runOnce()
        .then(() => undefined)
        .catch((error) => this.options.logger?.error({ err: error }, 'membership clock sweep failed'))
        .finally(() => {
          if (!this.stopped) this.timer = setTimeout(tick, this.intervalMs);
        });
    };
    tick();
  }

  /** Stops sweeping and waits for the sweep in flight. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  /** One sweep of every task, each until nothing is left; answers what each did. */
  async runOnce(now = new Date()): Promise<{ renewalReminders: number; lapseNotices: number; releasedRegistrations: number }> {
    let renewalReminders = 0;
    for (;;) {
      const sent = await sendRenewalReminders(this.orm.em.fork(), this.settings.renewalReminderDays);
      renewalReminders += sent;
      if (sent === 0) break;
    }
    let lapseNotices = 0;
    for (;;) {
      const sent = await sendLapseNotices(this.orm.em.fork());
      lapseNotices += sent;
      if (sent === 0) break;
    }
    let releasedRegistrations = 0;
    const batch = 100;
    for (;;) {
      const { events, released } = await releaseOverdueRegistrations(this.orm.em.fork(), registrationInvoicing, now, batch);
      releasedRegistrations += released;
      if (events < batch) break;
    }
    return { renewalReminders, lapseNotices, releasedRegistrations };
  }
}
