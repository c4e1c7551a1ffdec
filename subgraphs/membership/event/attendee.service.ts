import { LockMode, type FilterQuery } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Principal } from '../../../core/principal.js';
import { DomainError } from '../../../core/errors.js';
import { NotFoundError } from '../../shared/not-found.error.js';
import { paginate, UUID, type Page } from '../../shared/pagination.js';
import { Member } from '../member/member.entity.js';
import { Attendee } from './attendee.entity.js';
import { AttendeeStatus, HOLDS_A_PLACE } from './attendee-status.js';
import { hashCheckInCode, newCheckInCode } from './check-in-code.js';
import type { CheckInResult } from './check-in-result.js';
import { paymentDueAt, registrationOpenAt, type Event } from './event.entity.js';
import {
  AlreadyRegisteredError,
  AttendeeNotFoundError,
  AttendeeStatusError,
  EventCancelledError,
  EventEndedError,
  PaidEventMembersOnlyError,
  RegistrationClosedError,
} from './event.errors.js';
import type { AttendeesArgs, CancelRegistrationArgs, CheckInArgs, RegisterArgs } from './event.inputs.js';
import { EventStatus, eventStatusAt } from './event-status.js';
import { EventService } from './event.service.js';
import type { RegistrationBilling } from './registration-billing.js';
import { registrationWebhookData } from './registration-webhook-data.js';
import { enqueueWebhookEvent } from '../webhook/webhook-outbox.js';
import { escapeLike } from '../../shared/like.js';


function badInput(param: string, message: string): DomainError {
  return new DomainError('BAD_USER_INPUT', message, { param, reason: 'invalid_parameter' });
}

/**
 * Registrations, the waitlist and check-in. Every change to who holds a place runs in one
 * transaction that first locks the event row, so concurrent registrations and cancellations
 * take places one at a time and capacity is never exceeded. A paid event's place is held PENDING
 * with an invoice (`billing`) until it is paid or its deadline passes; whatever touches such a
 * registration locks its invoice before the attendee row, as payments do.
 */
export class AttendeeService {
  private readonly events: EventService;

  constructor(
    private readonly em: EntityManager,
    private readonly principal: Principal,
    private readonly billing?: RegistrationBilling,
  ) {
    this.events = new EventService(em, principal);
  }

  private get invoicing(): RegistrationBilling {
    if (!this.billing) throw new Error('Paid registrations need the registration billing of the subgraph context');
    return this.billing;
  }

  private get scope() {
    return { accountId: this.principal.accountId, mode: this.principal.mode };
  }

  /** The event's attendees, or null when the event does not exist in this account and mode. */
  async list(args: AttendeesArgs): Promise<Page<Attendee> | null> {
    const event = await this.events.find(args.id);
    if (!event) return null;
    const where: FilterQuery<Attendee>[] = [{ event: event.id, ...this.scope }];
    if (args.status) where.push({ status: args.status });
    if (args.guest === true) where.push({ member: null });
    if (args.guest === false) where.push({ member: { $ne: null } });
    if (args.search) {
      const pattern = `%${escapeLike(args.search)}%`;
      where.push({ $or: [{ name: { $ilike: pattern } }, { email: { $ilike: pattern } }] });
    }
    const page = await paginate(this.em, Attendee, where, args);
    await this.withWaitlistPositions(page.data);
    return page;
  }

  /**
   * Registers a member or a guest: a place while one is free, else the end of the waitlist.
   * The answer carries the check-in code, which is not shown again.
   */
  async register(args: RegisterArgs): Promise<Attendee> {
    const byMember = args.memberId != null;
    const byGuest = args.guestName != null || args.guestEmail != null;
    if (byMember && byGuest) throw badInput('memberId', 'Give either memberId or guestName and guestEmail, not both');
    if (!byMember && !byGuest) throw badInput('memberId', 'Give memberId, or guestName and guestEmail for a guest');
    if (byGuest && args.guestName == null) throw badInput('guestName', 'guestName is required for a guest');
    if (byGuest && args.guestEmail == null) throw badInput('guestEmail', 'guestEmail is required for a guest');

    const attendee = await this.em.transactional(async (em) => {
      const event = await this.events.lock(em, args.id);
      const now = new Date();
      this.assertRegistrationOpen(event, now);
      const paid = event.price > 0;
      if (paid && byGuest) throw new PaidEventMembersOnlyError();
      // Places whose payment is overdue go first, so this registration can have one.
      await this.releaseOverdueIn(em, event, now);

      let member: Member | null = null;
      if (byMember) {
        const memberId = args.memberId!;
        member = UUID.test(memberId) ? await em.findOne(Member, { id: memberId, ...this.scope, deletedAt: null }) : null;
        if (!member) {
          throw new DomainError('NOT_FOUND', `No member with id "${memberId}"`, { param: 'memberId', reason: 'member_not_found' });
        }
      }
      const name = member ? member.name : args.guestName!.trim();
      const email = member ? member.email : args.guestEmail!.trim().toLowerCase();
      const same: FilterQuery<Attendee>[] = [{ email }];
      if (member) same.push({ member: member.id });
      const existing = await em.findOne(Attendee, { event: event.id, status: { $ne: AttendeeStatus.CANCELLED }, $or: same });
      if (existing) {
        throw member
          ? new AlreadyRegisteredError(`Member "${member.id}"`, 'memberId')
          : new AlreadyRegisteredError(`"${email}"`, 'guestEmail');
      }

      const taken = await em.count(Attendee, { event: event.id, status: { $in: HOLDS_A_PLACE } });
      const hasPlace = event.capacity == null || taken < event.capacity;
      const last = hasPlace
        ? null
        : await em.findOne(Attendee, { event: event.id, waitlistNumber: { $ne: null } }, { orderBy: { waitlistNumber: 'desc' } });

      // Registrations for one event are serialised by the lock, so a code free now stays free.
      let code = newCheckInCode();
      while ((await em.count(Attendee, { event: event.id, codeHash: hashCheckInCode(code) })) > 0) code = newCheckInCode();

      const created = em.create(Attendee, {
        ...this.scope,
        event,
        member,
        name,
        email,
        status: hasPlace ? (paid ? AttendeeStatus.PENDING : AttendeeStatus.REGISTERED) : AttendeeStatus.WAITLISTED,
        waitlistNumber: hasPlace ? null : (last?.waitlistNumber ?? 0) + 1,
        codeHash: hashCheckInCode(code),
        createdAt: now,
      });
      created.code = code;
      if (hasPlace && paid) await this.bill(em, event, created, now);
      if (created.status === AttendeeStatus.REGISTERED) await this.announce(em, 'registration.confirmed', created);
      if (created.status === AttendeeStatus.WAITLISTED) await this.announce(em, 'registration.waitlisted', created);
      return created;
    });
    await this.withWaitlistPositions([attendee]);
    return attendee;
  }

  /**
   * Cancels a registration. A place it held goes to the first on the waitlist in the same
   * transaction. Cancelling again answers the attendee unchanged.
   */
  async cancel(args: CancelRegistrationArgs): Promise<Attendee> {
    const attendee = await this.em.transactional(async (em) => {
      const event = await this.events.lock(em, args.id);
      const attendee = await this.findIn(em, event, { attendeeId: args.attendeeId });
      if (attendee.status === AttendeeStatus.CANCELLED) return attendee;
      if (attendee.status === AttendeeStatus.CHECKED_IN) {
        throw new AttendeeStatusError('A checked-in attendee cannot be cancelled', 'attendee_checked_in', 'attendeeId');
      }
      const status = eventStatusAt(event);
      if (status === EventStatus.ENDED) throw new EventEndedError(event.id);
      const heldAPlace = HOLDS_A_PLACE.includes(attendee.status);
      const now = new Date();
      // An unpaid invoice is voided with the registration (a paid one stays: refunds are the organiser's call).
      if (attendee.status === AttendeeStatus.PENDING && attendee.invoiceId) await this.invoicing.releaseRegistration(em, this.principal, attendee.invoiceId);
      attendee.status = AttendeeStatus.CANCELLED;
      attendee.cancelledAt = now;
      attendee.paymentDueAt = null;
      if (heldAPlace && status === EventStatus.SCHEDULED) await this.fillPlaces(em, event, now);
      return attendee;
    });
    await this.withWaitlistPositions([attendee]);
    return attendee;
  }

  /**
   * Checks an attendee in, by id or by code. Safe to retry: a second check-in answers
   * `alreadyCheckedIn` with the first time instead of failing.
   */
  async checkIn(args: CheckInArgs): Promise<CheckInResult> {
    if ((args.attendeeId == null) === (args.code == null)) {
      throw badInput('attendeeId', 'Give either attendeeId or code');
    }
    return this.em.transactional(async (em) => {
      const event = await this.events.find(args.id);
      if (!event) throw new NotFoundError('event', args.id);
      if (eventStatusAt(event) === EventStatus.CANCELLED) throw new EventCancelledError(event.id);
      // The attendee's row lock makes simultaneous check-ins of one attendee answer one "checked in", the rest "already".
      const attendee = await this.findIn(em, event, args, LockMode.PESSIMISTIC_WRITE);
      if (attendee.status === AttendeeStatus.WAITLISTED) {
        throw new AttendeeStatusError('A waitlisted attendee has no place to check in to', 'attendee_waitlisted', args.code != null ? 'code' : 'attendeeId');
      }
      if (attendee.status === AttendeeStatus.CANCELLED) {
        throw new AttendeeStatusError('The registration was cancelled', 'attendee_cancelled', args.code != null ? 'code' : 'attendeeId');
      }
      if (attendee.status === AttendeeStatus.PENDING) {
        throw new AttendeeStatusError('The registration is not paid yet', 'attendee_payment_pending', args.code != null ? 'code' : 'attendeeId');
      }
      if (attendee.status === AttendeeStatus.CHECKED_IN) {
        return { attendee, alreadyCheckedIn: true, checkedInAt: attendee.checkedInAt! };
      }
      attendee.status = AttendeeStatus.CHECKED_IN;
      attendee.checkedInAt = new Date();
      return { attendee, alreadyCheckedIn: false, checkedInAt: attendee.checkedInAt };
    });
  }

  /**
   * Gives up the places of the event's unpaid registrations past their deadline, in the caller's
   * transaction (which locked the event), and hands them to the waitlist. A registration whose
   * invoice was paid meanwhile keeps its place. Answers how many were released.
   */
  async releaseOverdue(eventId: string, now = new Date()): Promise<number> {
    return this.em.transactional(async (em) => {
      const event = await this.events.lock(em, eventId);
      return this.releaseOverdueIn(em, event, now);
    });
  }

  private async releaseOverdueIn(em: EntityManager, event: Event, now: Date): Promise<number> {
    const overdue = await em.find(Attendee, { event: event.id, status: AttendeeStatus.PENDING, paymentDueAt: { $lte: now } }, { orderBy: { paymentDueAt: 'asc', id: 'asc' } });
    let released = 0;
    for (const attendee of overdue) {
      const outcome = attendee.invoiceId ? await this.invoicing.releaseRegistration(em, this.principal, attendee.invoiceId) : 'voided';
      if (outcome === 'paid') {
        attendee.status = AttendeeStatus.REGISTERED;
        attendee.paymentDueAt = null;
        continue;
      }
      attendee.status = AttendeeStatus.CANCELLED;
      attendee.cancelledAt = now;
      attendee.cancellationReason = 'payment_overdue';
      released++;
    }
    if (released && eventStatusAt(event, now) === EventStatus.SCHEDULED) await this.fillPlaces(em, event, now);
    return released;
  }

  /**
   * Gives free places to the waitlist in its order, in the caller's transaction (which locked the
   * event): a free event's next in line is REGISTERED, a paid event's PENDING with an invoice and
   * a deadline of its own.
   */
  async fillPlaces(em: EntityManager, event: Event, now: Date): Promise<Attendee[]> {
    await em.flush();
    const taken = await em.count(Attendee, { event: event.id, status: { $in: HOLDS_A_PLACE } });
    const free = event.capacity == null ? Number.MAX_SAFE_INTEGER : event.capacity - taken;
    if (free <= 0) return [];
    const next = await em.find(Attendee, { event: event.id, status: AttendeeStatus.WAITLISTED }, { orderBy: { waitlistNumber: 'asc' }, limit: Math.min(free, 10_000), populate: ['member'] });
    for (const attendee of next) {
      attendee.promotedAt = now;
      if (event.price > 0 && attendee.member) {
        attendee.status = AttendeeStatus.PENDING;
        await this.bill(em, event, attendee, now);
      } else {
        attendee.status = AttendeeStatus.REGISTERED;
      }
      await this.announce(em, 'registration.promoted', attendee);
    }
    return next;
  }

  /** Opens the invoice of a place in a paid event and sets its deadline. */
  private async bill(em: EntityManager, event: Event, attendee: Attendee, now: Date): Promise<void> {
    const dueAt = paymentDueAt(event, now);
    attendee.paymentDueAt = dueAt;
    attendee.invoiceId = await this.invoicing.billRegistration(em, this.principal, { attendee, event, member: attendee.member!, dueAt });
  }

  /** A PENDING registration whose invoice was just paid is REGISTERED, in the payment's transaction (which locked the invoice). */
  async confirmPaid(attendeeId: string): Promise<void> {
    const attendee = await this.em.findOne(Attendee, { id: attendeeId, ...this.scope }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
    if (attendee?.status !== AttendeeStatus.PENDING) return;
    attendee.status = AttendeeStatus.REGISTERED;
    attendee.paymentDueAt = null;
    await this.announce(this.em, 'registration.confirmed', attendee);
  }

  /** Tells the account's endpoints of a registration's change, in the transaction that made it. */
  private announce(em: EntityManager, type: 'registration.confirmed' | 'registration.waitlisted' | 'registration.promoted', attendee: Attendee): Promise<void> {
    return enqueueWebhookEvent(em, this.principal, type, { registration: registrationWebhookData(attendee) });
  }

  /**
   * A REGISTERED registration whose invoice a refund reopened is PENDING again, with a new
   * deadline, in the refund's transaction (which locked the invoice): its place follows the money.
   */
  async reopenOnRefund(attendeeId: string, now = new Date()): Promise<void> {
    const attendee = await this.em.findOne(Attendee, { id: attendeeId, ...this.scope }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true, populate: ['event'] });
    if (attendee?.status !== AttendeeStatus.REGISTERED) return;
    attendee.status = AttendeeStatus.PENDING;
    attendee.paymentDueAt = paymentDueAt(attendee.event, now);
  }

  private assertRegistrationOpen(event: Event, now: Date): void {
    const status = eventStatusAt(event, now);
    if (status === EventStatus.CANCELLED) throw new EventCancelledError(event.id);
    if (registrationOpenAt(event, now)) return;
    if (event.registrationOpensAt && now < event.registrationOpensAt) {
      throw new RegistrationClosedError(`Registration opens at ${event.registrationOpensAt.toISOString()}`);
    }
    throw new RegistrationClosedError(`Registration closed at ${event.registrationClosesAt.toISOString()}`);
  }

  private async findIn(
    em: EntityManager,
    event: Event,
    by: { attendeeId?: string | null; code?: string | null },
    lockMode?: LockMode,
  ): Promise<Attendee> {
    let attendee: Attendee | null = null;
    if (by.code != null || UUID.test(by.attendeeId!)) {
      const which: FilterQuery<Attendee> = by.code != null ? { codeHash: hashCheckInCode(by.code) } : { id: by.attendeeId! };
      attendee = await em.findOne(Attendee, { ...which, event: event.id, ...this.scope }, lockMode ? { lockMode } : {});
    }
    if (!attendee) {
      throw by.code != null ? new AttendeeNotFoundError('code', by.code) : new AttendeeNotFoundError('attendeeId', by.attendeeId!);
    }
    return attendee;
  }

  /** Sets `waitlistPosition` (1 = next in line) on the waitlisted ones, in one query. */
  private async withWaitlistPositions(attendees: Attendee[]): Promise<void> {
    const waiting = attendees.filter((a) => a.status === AttendeeStatus.WAITLISTED);
    for (const a of attendees) a.waitlistPosition = null;
    if (!waiting.length) return;
    const rows = await this.em.getConnection().execute<{ id: string; position: number }[]>(
      `select w.id, (select count(*)::int from membership.event_attendee o
          where o.event_id = w.event_id and o.status = 'waitlisted' and o.waitlist_number <= w.waitlist_number) as position
        from membership.event_attendee w where w.id in (?)`,
      [waiting.map((a) => a.id)],
    );
    const byId = new Map(rows.map((r) => [r.id, r.position]));
    for (const a of waiting) a.waitlistPosition = byId.get(a.id) ?? null;
  }
}
