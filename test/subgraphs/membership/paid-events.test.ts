import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '../../../core/principal.js';
import { MembershipClockWorker } from '../../../subgraphs/membership/clock/membership-clock.worker.js';
import { principalFor } from '../../support/subgraph-harness.js';
import { startMembership, uniqueEmail, type Membership } from './finance-support.js';

let m: Membership;
beforeAll(async () => {
  m = await startMembership();
});
afterAll(async () => {
  await m?.close();
});

const HOUR = 3_600_000;
const ATTENDEE = 'id status memberId invoiceId paymentDueAt cancellationReason promotedAt waitlistPosition code';
const CREATE_EVENT = `mutation($capacity: Int, $price: Int, $currency: String, $paymentTermHours: Int, $startsAt: DateTime!, $endsAt: DateTime!) {
  createEvent(title: "Gala", startsAt: $startsAt, endsAt: $endsAt, timeZone: "Europe/Berlin", capacity: $capacity, price: $price, currency: $currency, paymentTermHours: $paymentTermHours) { id price currency paymentTermHours }
}`;
const REGISTER = `mutation($id: ID!, $memberId: ID, $guestName: String, $guestEmail: String) {
  registerForEvent(id: $id, memberId: $memberId, guestName: $guestName, guestEmail: $guestEmail) { ${ATTENDEE} }
}`;
const ATTENDEES = `query($id: ID!) { eventAttendees(id: $id, limit: 100) { data { ${ATTENDEE} } } }`;
const INVOICE = `query($id: ID!) { invoice(id: $id) { id kind status total currency memberId attendeeId dueOn } }`;
const PAY = `mutation($invoiceId: ID!, $amount: Int!) { createPayment(invoiceId: $invoiceId, amount: $amount, method: CARD) { id } }`;
const REFUND = `mutation($paymentId: ID!) { createRefund(paymentId: $paymentId) { id } }`;
const CHECK_IN = `mutation($id: ID!, $attendeeId: ID) { checkInAttendee(id: $id, attendeeId: $attendeeId) { alreadyCheckedIn } }`;
const CANCEL = `mutation($id: ID!, $attendeeId: ID!) { cancelRegistration(id: $id, attendeeId: $attendeeId) { ${ATTENDEE} } }`;

interface AttendeeView {
  id: string;
  status: string;
  memberId: string | null;
  invoiceId: string | null;
  paymentDueAt: string | null;
  cancellationReason: string | null;
  promotedAt: string | null;
}

async function event(principal: Principal, args: Record<string, unknown> = {}): Promise<{ id: string }> {
  const startsAt = new Date(Date.now() + 30 * 24 * HOUR);
  return (await m.ok(principal, CREATE_EVENT, { price: 2500, currency: 'EUR', startsAt, endsAt: new Date(startsAt.getTime() + 2 * HOUR), ...args })).createEvent;
}

async function member(principal: Principal): Promise<string> {
  return (await m.ok(principal, `mutation($email: String!) { createMember(name: "Guest", email: $email) { id } }`, { email: uniqueEmail('attendee') })).createMember.id;
}

async function register(principal: Principal, eventId: string, memberId: string): Promise<AttendeeView> {
  return (await m.ok(principal, REGISTER, { id: eventId, memberId })).registerForEvent;
}

async function attendees(principal: Principal, eventId: string): Promise<Map<string, AttendeeView>> {
  const data = (await m.ok(principal, ATTENDEES, { id: eventId })).eventAttendees.data as AttendeeView[];
  return new Map(data.map((a) => [a.id, a]));
}

async function invoice(principal: Principal, id: string) {
  return (await m.ok(principal, INVOICE, { id })).invoice;
}

const clock = () => new MembershipClockWorker(m.subgraph.orm);

describe('a paid event', () => {
  it('registers a member PENDING with an invoice for the price, REGISTERED once it is paid; check-in waits for the payment', async () => {
    const principal = principalFor();
    const gala = await event(principal, { paymentTermHours: 24 });
    const memberId = await member(principal);
    const before = Date.now();
    const pending = await register(principal, gala.id, memberId);
    expect(pending).toMatchObject({ status: 'PENDING', memberId, cancellationReason: null });
    const due = Date.parse(pending.paymentDueAt!);
    // Date-times are answered to the second.
    expect(due).toBeGreaterThanOrEqual(before - 1000 + 24 * HOUR);
    expect(due).toBeLessThanOrEqual(Date.now() + 24 * HOUR);
    const bill = await invoice(principal, pending.invoiceId!);
    expect(bill).toMatchObject({ kind: 'EVENT', status: 'OPEN', total: 2500, currency: 'EUR', memberId, attendeeId: pending.id, dueOn: new Date(due).toISOString().slice(0, 10) });
    expect(await m.fails(principal, CHECK_IN, { id: gala.id, attendeeId: pending.id })).toMatchObject({ code: 'CONFLICT', reason: 'attendee_payment_pending' });

    await m.ok(principal, PAY, { invoiceId: bill.id, amount: 1000 });
    expect((await attendees(principal, gala.id)).get(pending.id)?.status, 'a part payment confirms nothing').toBe('PENDING');
    await m.ok(principal, PAY, { invoiceId: bill.id, amount: 1500 });
    expect((await attendees(principal, gala.id)).get(pending.id)).toMatchObject({ status: 'REGISTERED', paymentDueAt: null });
    expect((await m.ok(principal, CHECK_IN, { id: gala.id, attendeeId: pending.id })).checkInAttendee.alreadyCheckedIn).toBe(false);
  });

  it('holds the place until the start at the latest', async () => {
    const principal = principalFor();
    const startsAt = new Date(Math.floor((Date.now() + 3 * HOUR) / 1000) * 1000);
    const soon = await event(principal, { startsAt, endsAt: new Date(startsAt.getTime() + HOUR), paymentTermHours: 48 });
    const pending = await register(principal, soon.id, await member(principal));
    expect(Date.parse(pending.paymentDueAt!)).toBe(startsAt.getTime());
  });

  it('refuses a guest with 400 paid_event_members_only, while a free event registers guests and members at once', async () => {
    const principal = principalFor();
    const gala = await event(principal);
    expect(await m.fails(principal, REGISTER, { id: gala.id, guestName: 'Walk In', guestEmail: 'walk.in@example.org' })).toMatchObject({ code: 'BAD_USER_INPUT', reason: 'paid_event_members_only', param: 'guestEmail' });
    const free = await event(principal, { price: 0, currency: null });
    expect((await m.ok(principal, REGISTER, { id: free.id, guestName: 'Walk In', guestEmail: 'walk.in@example.org' })).registerForEvent).toMatchObject({ status: 'REGISTERED', invoiceId: null, paymentDueAt: null });
    expect(await register(principal, free.id, await member(principal))).toMatchObject({ status: 'REGISTERED', invoiceId: null });
  });

  it('releases an unpaid place past its deadline to the waitlist in order: the invoice is voided, the next in line is PENDING with an invoice of its own', async () => {
    const principal = principalFor();
    const gala = await event(principal, { capacity: 2, paymentTermHours: 1 });
    const [a, b, c, d] = await Promise.all([1, 2, 3, 4].map(() => member(principal)));
    const late = await register(principal, gala.id, a);
    const payer = await register(principal, gala.id, b);
    const first = await register(principal, gala.id, c);
    const second = await register(principal, gala.id, d);
    expect([late.status, payer.status, first.status, second.status]).toEqual(['PENDING', 'PENDING', 'WAITLISTED', 'WAITLISTED']);
    await m.ok(principal, PAY, { invoiceId: payer.invoiceId, amount: 2500 });

    expect((await clock().runOnce()).releasedRegistrations, 'nothing is due yet').toBe(0);
    expect((await clock().runOnce(new Date(Date.now() + 2 * HOUR))).releasedRegistrations).toBe(1);
    const after = await attendees(principal, gala.id);
    expect(after.get(late.id)).toMatchObject({ status: 'CANCELLED', cancellationReason: 'payment_overdue' });
    expect(after.get(payer.id)).toMatchObject({ status: 'REGISTERED' });
    expect(after.get(first.id)).toMatchObject({ status: 'PENDING', promotedAt: expect.anything() });
    expect(after.get(first.id)!.invoiceId).toMatch(/^[0-9a-f-]{36}$/);
    expect(after.get(second.id)).toMatchObject({ status: 'WAITLISTED', invoiceId: null });
    expect((await invoice(principal, late.invoiceId!)).status).toBe('VOID');
    expect(await m.fails(principal, PAY, { invoiceId: late.invoiceId, amount: 2500 })).toMatchObject({ reason: 'invoice_not_payable' });
    expect((await invoice(principal, after.get(first.id)!.invoiceId!)).status).toBe('OPEN');
  });

  it('gives a new registration the place of an overdue one at once, without waiting for the clock', async () => {
    const principal = principalFor();
    const gala = await event(principal, { capacity: 1 });
    const late = await register(principal, gala.id, await member(principal));
    // Time passing: the deadline is moved into the past rather than waited for.
    await m.sql(`update membership.event_attendee set payment_due_at = now() - interval '1 minute' where id = ?`, [late.id]);
    const next = await register(principal, gala.id, await member(principal));
    expect(next.status).toBe('PENDING');
    expect((await attendees(principal, gala.id)).get(late.id)).toMatchObject({ status: 'CANCELLED', cancellationReason: 'payment_overdue' });
  });

  it('cancelling a PENDING registration voids its invoice and promotes the waitlist', async () => {
    const principal = principalFor();
    const gala = await event(principal, { capacity: 1 });
    const pending = await register(principal, gala.id, await member(principal));
    const waiting = await register(principal, gala.id, await member(principal));
    await m.ok(principal, CANCEL, { id: gala.id, attendeeId: pending.id });
    expect((await invoice(principal, pending.invoiceId!)).status).toBe('VOID');
    expect((await attendees(principal, gala.id)).get(waiting.id)?.status).toBe('PENDING');
  });

  it('a refund of the paid invoice puts the registration back to PENDING with a new deadline', async () => {
    const principal = principalFor();
    const gala = await event(principal);
    const pending = await register(principal, gala.id, await member(principal));
    const payment = (await m.ok(principal, PAY, { invoiceId: pending.invoiceId, amount: 2500 })).createPayment.id;
    expect((await attendees(principal, gala.id)).get(pending.id)?.status).toBe('REGISTERED');
    await m.ok(principal, REFUND, { paymentId: payment });
    const refunded = (await attendees(principal, gala.id)).get(pending.id)!;
    expect(refunded.status).toBe('PENDING');
    expect(Date.parse(refunded.paymentDueAt!)).toBeGreaterThan(Date.now() + 47 * HOUR);
  });

  it('racing payments and the release at the deadline: each place ends paid and REGISTERED or released with its invoice void, never more than the capacity', async () => {
    const principal = principalFor();
    const gala = await event(principal, { capacity: 6, paymentTermHours: 1 });
    const people = await Promise.all(Array.from({ length: 10 }, () => member(principal)));
    const registered: AttendeeView[] = [];
    for (const person of people) registered.push(await register(principal, gala.id, person));
    const holders = registered.filter((a) => a.status === 'PENDING');
    expect(holders).toHaveLength(6);
    const later = new Date(Date.now() + 2 * HOUR);
    await Promise.all([
      ...holders.map((a) => m.gql(principal, PAY, { invoiceId: a.invoiceId, amount: 2500 })),
      clock().runOnce(later),
      clock().runOnce(later),
    ]);
    await clock().runOnce(later);
    const after = await attendees(principal, gala.id);
    for (const a of holders) {
      const now = after.get(a.id)!;
      const bill = await invoice(principal, a.invoiceId!);
      if (now.status === 'REGISTERED') expect(bill.status).toBe('PAID');
      else expect([now.status, now.cancellationReason, bill.status]).toEqual(['CANCELLED', 'payment_overdue', 'VOID']);
    }
    const holding = [...after.values()].filter((a) => ['PENDING', 'REGISTERED', 'CHECKED_IN'].includes(a.status));
    expect(holding.length).toBeLessThanOrEqual(6);
    const released = holders.filter((a) => after.get(a.id)!.status === 'CANCELLED').length;
    expect(holding.length).toBe(Math.min(6, 6 - released + Math.min(released, 4)));
  });
});
