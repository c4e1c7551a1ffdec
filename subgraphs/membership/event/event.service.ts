import { LockMode, type FilterQuery } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Principal } from '../../../core/principal.js';
import { DomainError } from '../../../core/errors.js';
import { NotFoundError } from '../../shared/not-found.error.js';
import { paginate, UUID, type Page } from '../../shared/pagination.js';
import { Attendee } from './attendee.entity.js';
import { AttendeeService } from './attendee.service.js';
import { AttendeeStatus, HOLDS_A_PLACE } from './attendee-status.js';
import { DEFAULT_PAYMENT_TERM_HOURS, Event } from './event.entity.js';
import { CapacityBelowTakenError, EventCancelledError, EventEndedError, EventHasRegistrationsError } from './event.errors.js';
import { EventStatus, eventStatusAt } from './event-status.js';
import type { CreateEventArgs, EventsArgs, UpdateEventArgs } from './event.inputs.js';
import type { RegistrationBilling } from './registration-billing.js';
import { canonicalTimeZone } from './time-zone.js';

function badInput(param: string, message: string): DomainError {
  return new DomainError('BAD_USER_INPUT', message, { param, reason: 'invalid_parameter' });
}

/** The rules an event's times keep, at creation and after every change. */
function checkTimes(t: { startsAt: Date; endsAt: Date; registrationOpensAt: Date | null; registrationClosesAt: Date }): void {
  if (t.endsAt <= t.startsAt) throw badInput('endsAt', 'endsAt must be after startsAt');
  if (t.registrationClosesAt > t.endsAt) throw badInput('registrationClosesAt', 'registrationClosesAt must not be after endsAt');
  if (t.registrationOpensAt && t.registrationOpensAt >= t.registrationClosesAt) {
    throw badInput('registrationOpensAt', 'registrationOpensAt must be before registrationClosesAt');
  }
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
    if (args.startsAt.getTime() <= Date.now()) throw badInput('startsAt', 'startsAt must be in the future: an event is created before it starts');
    const closesAt = args.registrationClosesAt ?? args.startsAt;
    checkTimes({ startsAt: args.startsAt, endsAt: args.endsAt, registrationOpensAt: args.registrationOpensAt ?? null, registrationClosesAt: closesAt });
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
   * Changes a scheduled event under its lock, so registrations queue behind the change. A
   * capacity increase (or none) gives the new places to the waitlist in order; a capacity below
   * the places held is refused, so nobody registered is unseated. The price and currency change
   * only before the first registration; times are checked as at creation, a new start in the future.
   */
  async update(args: UpdateEventArgs, billing?: RegistrationBilling): Promise<Event> {
    return this.em.transactional(async (em) => {
      const event = await this.lock(em, args.id);
      const now = new Date();
      const status = eventStatusAt(event, now);
      if (status === EventStatus.CANCELLED) throw new EventCancelledError(event.id);
      if (status === EventStatus.ENDED) throw new EventEndedError(event.id);

      if (args.title != null) event.title = args.title.trim();
      if (args.description !== undefined) event.description = args.description ?? null;
      if (args.location !== undefined) event.location = args.location?.trim() || null;
      if (args.timeZone != null) {
        const timeZone = canonicalTimeZone(args.timeZone);
        if (!timeZone) throw badInput('timeZone', `timeZone must be an IANA time zone name such as Europe/Berlin, got "${args.timeZone}"`);
        event.timeZone = timeZone;
      }
      if (args.startsAt != null && args.startsAt.getTime() !== event.startsAt.getTime() && args.startsAt.getTime() <= now.getTime()) {
        throw badInput('startsAt', 'startsAt must be in the future');
      }
      if (args.endsAt != null && args.endsAt.getTime() <= now.getTime()) throw badInput('endsAt', 'endsAt must be in the future');
      const startsAt = args.startsAt ?? event.startsAt;
      // A closing time left at its default (the start) follows the start.
      const closesAt = args.registrationClosesAt ?? (args.registrationClosesAt === null || event.registrationClosesAt.getTime() === event.startsAt.getTime() ? startsAt : event.registrationClosesAt);
      const opensAt = args.registrationOpensAt !== undefined ? (args.registrationOpensAt ?? null) : (event.registrationOpensAt ?? null);
      const times = { startsAt, endsAt: args.endsAt ?? event.endsAt, registrationOpensAt: opensAt, registrationClosesAt: closesAt };
      checkTimes(times);
      Object.assign(event, times);

      const price = args.price ?? event.price;
      const currency = args.currency != null ? args.currency.toUpperCase() : (event.currency ?? null);
      if (price !== event.price || currency !== (event.currency ?? null)) {
        const registrations = await em.count(Attendee, { event: event.id, status: { $ne: AttendeeStatus.CANCELLED } });
        if (registrations > 0) throw new EventHasRegistrationsError(args.price != null ? 'price' : 'currency');
        if (price > 0 && !currency) throw badInput('currency', 'currency is required when the price is above 0');
        Object.assign(event, { price, currency });
      }
      if (args.paymentTermHours != null) event.paymentTermHours = args.paymentTermHours;

      if (args.capacity !== undefined && args.capacity !== event.capacity) {
        const taken = await em.count(Attendee, { event: event.id, status: { $in: HOLDS_A_PLACE } });
        if (args.capacity !== null && args.capacity < taken) throw new CapacityBelowTakenError(taken);
        event.capacity = args.capacity;
        await new AttendeeService(em, this.principal, billing).fillPlaces(em, event, now);
      }
      return event;
    });
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
