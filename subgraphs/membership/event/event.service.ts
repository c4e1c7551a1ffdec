import { LockMode, type FilterQuery } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Principal } from '../../../core/principal.js';
import { DomainError } from '../../../core/errors.js';
import { NotFoundError } from '../../shared/not-found.error.js';
import { paginate, UUID, type Page } from '../../shared/pagination.js';
import { DEFAULT_PAYMENT_TERM_HOURS, Event } from './event.entity.js';
import { EventEndedError } from './event.errors.js';
import { EventStatus, eventStatusAt } from './event-status.js';
import type { CreateEventArgs, EventsArgs } from './event.inputs.js';
import { canonicalTimeZone } from './time-zone.js';

function badInput(param: string, message: string): DomainError {
  return new DomainError('BAD_USER_INPUT', message, { param, reason: 'invalid_parameter' });
}

/** Events of the principal's account and mode: every query here is scoped to both. */
export class EventService {
  constructor(
    private readonly em: EntityManager,
    private readonly principal: Principal,
  ) {}

  get scope() {
    return { accountId: this.principal.accountId, mode: this.principal.mode };
  }

  async list(args: EventsArgs): Promise<Page<Event>> {
    const now = new Date();
    const where: FilterQuery<Event>[] = [this.scope];
    if (args.status === EventStatus.CANCELLED) where.push({ cancelledAt: { $ne: null } });
    if (args.status === EventStatus.SCHEDULED) where.push({ cancelledAt: null, endsAt: { $gt: now } });
    if (args.status === EventStatus.ENDED) where.push({ cancelledAt: null, endsAt: { $lte: now } });
    if (args.startsAfter) where.push({ startsAt: { $gte: args.startsAfter } });
    if (args.startsBefore) where.push({ startsAt: { $lt: args.startsBefore } });
    return paginate(this.em, Event, where, args);
  }

  /** One event, or null when it does not exist in this account and mode. */
  async find(id: string): Promise<Event | null> {
    if (!UUID.test(id)) return null;
    return this.em.findOne(Event, { id, ...this.scope });
  }

  /** The event locked for the rest of `em`'s transaction: registrations, cancellations and promotions queue here. */
  async lock(em: EntityManager, id: string): Promise<Event> {
    if (!UUID.test(id)) throw new NotFoundError('event', id);
    const event = await em.findOne(Event, { id, ...this.scope }, { lockMode: LockMode.PESSIMISTIC_WRITE });
    if (!event) throw new NotFoundError('event', id);
    return event;
  }

  async create(args: CreateEventArgs): Promise<Event> {
    const timeZone = canonicalTimeZone(args.timeZone);
    if (!timeZone) throw badInput('timeZone', `timeZone must be an IANA time zone name such as Europe/Berlin, got "${args.timeZone}"`);
    if (args.endsAt <= args.startsAt) throw badInput('endsAt', 'endsAt must be after startsAt');
    const closesAt = args.registrationClosesAt ?? args.startsAt;
    if (closesAt > args.endsAt) throw badInput('registrationClosesAt', 'registrationClosesAt must not be after endsAt');
    if (args.registrationOpensAt && args.registrationOpensAt >= closesAt) {
      throw badInput('registrationOpensAt', 'registrationOpensAt must be before registrationClosesAt');
    }
    const price = args.price ?? 0;
    const currency = args.currency ? args.currency.toUpperCase() : null;
    if (price > 0 && !currency) throw badInput('currency', 'currency is required when the price is above 0');
    const event = this.em.create(Event, {
      ...this.scope,
      title: args.title.trim(),
      description: args.description ?? null,
      startsAt: args.startsAt,
      endsAt: args.endsAt,
      timeZone,
      location: args.location?.trim() || null,
      capacity: args.capacity ?? null,
      registrationOpensAt: args.registrationOpensAt ?? null,
      registrationClosesAt: closesAt,
      price,
      currency,
      paymentTermHours: args.paymentTermHours ?? DEFAULT_PAYMENT_TERM_HOURS,
    });
    await this.em.flush();
    return event;
  }

  /**
   * Cancels the event: registration and check-in stop, registrations stay listed as they were.
   * Cancelling again answers the event unchanged; an event that has ended cannot be cancelled.
   */
  async cancel(id: string): Promise<Event> {
    return this.em.transactional(async (em) => {
      const event = await this.lock(em, id);
      const status = eventStatusAt(event);
      if (status === EventStatus.CANCELLED) return event;
      if (status === EventStatus.ENDED) throw new EventEndedError(id);
      event.cancelledAt = new Date();
      return event;
    });
  }
}
