import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '../../../core/principal.js';
import { principalFor } from '../../support/subgraph-harness.js';
import { AUDIT, CREATE_MEMBER, INVOICES, MEMBER_FIELDS, PAY, RENEW, startMembership, TODAY, uniqueEmail, utcDate, Y, M, D, type Membership } from './finance-support.js';

let m: Membership;
beforeAll(async () => {
  m = await startMembership();
});
afterAll(async () => {
  await m?.close();
});

interface MemberView {
  id: string;
  status: string;
  periodStart: string;
  periodEnd: string | null;
  graceEndsOn: string | null;
}

interface InvoiceView {
  id: string;
  kind: string;
  status: string;
  total: number;
  periodStart: string | null;
  periodEnd: string | null;
}

const ACTIVATE = `mutation($id: ID!) { activateMember(id: $id) { ${MEMBER_FIELDS} } }`;
const MEMBER = `query($id: ID!) { member(id: $id) { ${MEMBER_FIELDS} } }`;
const VOID = `mutation($id: ID!) { voidInvoice(id: $id) { id status } }`;
const CATEGORY = `mutation($name: String!, $feeAmount: Int!, $currency: String!, $period: CategoryPeriod!, $graceDays: Int, $renewalWindowDays: Int) {
  createMemberCategory(name: $name, feeAmount: $feeAmount, currency: $currency, period: $period, graceDays: $graceDays, renewalWindowDays: $renewalWindowDays) { id renewalWindowDays }
}`;

let counter = 0;
/** An active member of a new category, joined on `joinedOn`. */
async function memberOf(principal: Principal, categoryArgs: Record<string, unknown>, joinedOn: string): Promise<MemberView> {
  const category = (await m.ok(principal, CATEGORY, { name: `Renewals ${++counter}`, feeAmount: 5000, currency: 'EUR', period: 'YEARLY', ...categoryArgs })).createMemberCategory;
  const created = (await m.ok(principal, CREATE_MEMBER, { name: 'Renewing', email: uniqueEmail('renewal'), categoryId: category.id, joinedOn })).createMember as MemberView;
  return created.status === 'PENDING' ? (await m.ok(principal, ACTIVATE, { id: created.id })).activateMember : created;
}

async function renewals(principal: Principal, memberId: string): Promise<InvoiceView[]> {
  return ((await m.ok(principal, INVOICES, { memberId, limit: 100 })).invoices.data as InvoiceView[]).filter((i) => i.kind === 'RENEWAL');
}

async function read(principal: Principal, id: string): Promise<MemberView> {
  return (await m.ok(principal, MEMBER, { id })).member;
}

/** Joined a year ago less `days`: the period ends `days - 1` days from today. */
const endingIn = (days: number) => utcDate(Y - 1, M, D + days + 1);

describe('a paid renewal', () => {
  it('opens an invoice for the next period and moves the paid-through date only when it is paid', async () => {
    const principal = principalFor();
    const x = await memberOf(principal, { graceDays: 10 }, endingIn(9));
    expect(x.periodEnd).toBe(utcDate(Y, M, D + 9));
    const renewed = (await m.ok(principal, RENEW, { id: x.id })).renewMember as MemberView;
    expect(renewed).toMatchObject({ status: 'ACTIVE', periodStart: x.periodStart, periodEnd: x.periodEnd, graceEndsOn: x.graceEndsOn });
    const [invoice] = await renewals(principal, x.id);
    const nextEnd = utcDate(Y + 1, M, D + 9);
    expect(invoice).toMatchObject({ status: 'OPEN', total: 5000, periodStart: utcDate(Y, M, D + 10), periodEnd: nextEnd });
    expect(await read(principal, x.id)).toMatchObject({ periodEnd: x.periodEnd });

    await m.ok(principal, PAY, { invoiceId: invoice.id, amount: 2000, method: 'CARD' });
    expect((await read(principal, x.id)).periodEnd, 'a part payment adds nothing').toBe(x.periodEnd);
    await m.ok(principal, PAY, { invoiceId: invoice.id, amount: 3000, method: 'CARD' });
    expect(await read(principal, x.id)).toMatchObject({ status: 'ACTIVE', periodStart: x.periodStart, periodEnd: nextEnd, graceEndsOn: utcDate(Y + 1, M, D + 19) });

    const actions = (await m.ok(principal, AUDIT, { entity: 'member', entityId: x.id })).auditEvents.data;
    expect(actions[0]).toMatchObject({ action: 'member.renewed', before: { periodEnd: x.periodEnd }, after: { periodEnd: nextEnd, invoiceId: invoice.id } });
    expect(actions[1]).toMatchObject({ action: 'member.renewal_invoiced', after: { periodEnd: x.periodEnd, invoiceId: invoice.id } });
  });

  it('starts a lapsed member anew from today once paid, and leaves it LAPSED until then', async () => {
    const principal = principalFor();
    const x = await memberOf(principal, { period: 'QUARTERLY', feeAmount: 2500 }, utcDate(Y - 2, M, D));
    expect(x.status).toBe('LAPSED');
    expect((await m.ok(principal, RENEW, { id: x.id })).renewMember).toMatchObject({ status: 'LAPSED', periodEnd: x.periodEnd });
    const [invoice] = await renewals(principal, x.id);
    expect(invoice).toMatchObject({ total: 2500, periodStart: TODAY, periodEnd: utcDate(Y, M + 3, D - 1) });
    await m.ok(principal, PAY, { invoiceId: invoice.id, amount: 2500, method: 'BANK_TRANSFER' });
    expect(await read(principal, x.id)).toMatchObject({ status: 'ACTIVE', periodStart: TODAY, periodEnd: utcDate(Y, M + 3, D - 1) });
  });

  it('is renewed from a member in grace whatever the window', async () => {
    const principal = principalFor();
    const x = await memberOf(principal, { graceDays: 30, renewalWindowDays: 0 }, utcDate(Y - 1, M, D - 10));
    expect(x.status).toBe('GRACE');
    await m.ok(principal, RENEW, { id: x.id });
    const [invoice] = await renewals(principal, x.id);
    expect(invoice.periodStart).toBe(utcDate(Y, M, D - 10));
  });
});

describe('the renewal window', () => {
  it('refuses an active member before the category window opens with 409 renewal_not_due naming the date', async () => {
    const principal = principalFor();
    const x = await memberOf(principal, {}, endingIn(60));
    const refusal = await m.gql(principal, RENEW, { id: x.id });
    expect(refusal.errors?.[0].extensions).toMatchObject({ code: 'CONFLICT', reason: 'renewal_not_due' });
    expect(refusal.errors?.[0].message).toContain(utcDate(Y, M, D + 60 - 30));
    expect(await renewals(principal, x.id)).toEqual([]);
  });

  it('follows the category: its renewalWindowDays, set at creation and changed later', async () => {
    const principal = principalFor();
    const x = await memberOf(principal, { renewalWindowDays: 90 }, endingIn(60));
    const category = (await m.ok(principal, `query($id: ID!) { member(id: $id) { category { id renewalWindowDays } } }`, { id: x.id })).member.category;
    expect(category.renewalWindowDays).toBe(90);
    await m.ok(principal, `mutation($id: ID!) { updateMemberCategory(id: $id, renewalWindowDays: 7) { id renewalWindowDays } }`, { id: category.id });
    expect(await m.fails(principal, RENEW, { id: x.id })).toMatchObject({ reason: 'renewal_not_due' });
    await m.ok(principal, `mutation($id: ID!) { updateMemberCategory(id: $id, renewalWindowDays: 60) { id } }`, { id: category.id });
    await m.ok(principal, RENEW, { id: x.id });
    expect(await renewals(principal, x.id)).toHaveLength(1);
  });

  it('keeps one renewal invoice open at a time: a second is 409 renewal_pending naming it, until it is voided', async () => {
    const principal = principalFor();
    const x = await memberOf(principal, {}, endingIn(5));
    await m.ok(principal, RENEW, { id: x.id });
    const [open] = await renewals(principal, x.id);
    expect(await m.fails(principal, RENEW, { id: x.id })).toMatchObject({ code: 'CONFLICT', reason: 'renewal_pending', existingId: open.id });
    await m.ok(principal, VOID, { id: open.id });
    await m.ok(principal, RENEW, { id: x.id });
    expect((await renewals(principal, x.id)).map((i) => i.status).sort()).toEqual(['OPEN', 'VOID']);
  });

  it('renews once per period: after the renewal is paid the next one is not due', async () => {
    const principal = principalFor();
    const x = await memberOf(principal, {}, endingIn(5));
    await m.ok(principal, RENEW, { id: x.id });
    const [open] = await renewals(principal, x.id);
    await m.ok(principal, PAY, { invoiceId: open.id, amount: 5000, method: 'CARD' });
    expect(await m.fails(principal, RENEW, { id: x.id })).toMatchObject({ reason: 'renewal_not_due' });
  });
});

describe('twenty renewals at once', () => {
  it('open one invoice for a paid category: the rest are renewal_pending, the period waits for the payment', async () => {
    const principal = principalFor();
    const x = await memberOf(principal, {}, endingIn(9));
    const results = await Promise.all(Array.from({ length: 20 }, () => m.gql(principal, RENEW, { id: x.id })));
    const ok = results.filter((r) => !r.errors);
    expect(ok).toHaveLength(1);
    expect(results.filter((r) => r.errors).map((r) => r.errors![0].extensions?.reason)).toEqual(Array(19).fill('renewal_pending'));
    const open = await renewals(principal, x.id);
    expect(open).toHaveLength(1);
    expect(await read(principal, x.id)).toMatchObject({ status: 'ACTIVE', periodEnd: x.periodEnd });
    await m.ok(principal, PAY, { invoiceId: open[0].id, amount: 5000, method: 'CARD' });
    expect((await read(principal, x.id)).periodEnd).toBe(utcDate(Y + 1, M, D + 9));
  });

  it('add one period to a free member: the rest are renewal_not_due', async () => {
    const principal = principalFor();
    const x = await memberOf(principal, { feeAmount: 0 }, endingIn(9));
    const results = await Promise.all(Array.from({ length: 20 }, () => m.gql(principal, RENEW, { id: x.id })));
    expect(results.filter((r) => !r.errors)).toHaveLength(1);
    expect(results.filter((r) => r.errors).map((r) => r.errors![0].extensions?.reason)).toEqual(Array(19).fill('renewal_not_due'));
    expect(await read(principal, x.id)).toMatchObject({ status: 'ACTIVE', periodEnd: utcDate(Y + 1, M, D + 9) });
    expect(await renewals(principal, x.id)).toEqual([]);
  });
});

const REFUND = `mutation($paymentId: ID!, $amount: Int) { createRefund(paymentId: $paymentId, amount: $amount) { id amount } }`;
const INVOICE = `query($id: ID!) { invoice(id: $id) { id status amountPaid amountRefunded } }`;

/** A member that renewed (invoice of 5000 opened) with its period before the renewal. */
async function renewing(principal: Principal, categoryArgs: Record<string, unknown>, joinedOn: string) {
  const before = await memberOf(principal, categoryArgs, joinedOn);
  await m.ok(principal, RENEW, { id: before.id });
  const [invoice] = await renewals(principal, before.id);
  return { before, invoice };
}

async function pay(principal: Principal, invoiceId: string, amount: number): Promise<string> {
  return (await m.ok(principal, PAY, { invoiceId, amount, method: 'CARD' })).createPayment.id;
}

describe('a refund of a renewal', () => {
  it('in full takes the period back: an active member returns to its old end, a member in grace to GRACE', async () => {
    const principal = principalFor();
    const { before, invoice } = await renewing(principal, { graceDays: 30 }, utcDate(Y - 1, M, D - 10));
    expect(before.status).toBe('GRACE');
    const payment = await pay(principal, invoice.id, 5000);
    expect(await read(principal, before.id)).toMatchObject({ status: 'ACTIVE', periodEnd: invoice.periodEnd });
    await m.ok(principal, REFUND, { paymentId: payment });
    expect(await read(principal, before.id)).toMatchObject({ status: 'GRACE', periodStart: before.periodStart, periodEnd: before.periodEnd, graceEndsOn: before.graceEndsOn });
    const [event] = (await m.ok(principal, AUDIT, { entity: 'member', entityId: before.id, limit: 1 })).auditEvents.data;
    expect(event).toMatchObject({ action: 'member.renewal_revoked', before: { periodEnd: invoice.periodEnd }, after: { periodEnd: before.periodEnd, invoiceId: invoice.id } });
  });

  it('in full returns a lapsed member that renewed to LAPSED with its old period', async () => {
    const principal = principalFor();
    const { before, invoice } = await renewing(principal, {}, utcDate(Y - 3, M, D));
    const payment = await pay(principal, invoice.id, 5000);
    expect(await read(principal, before.id)).toMatchObject({ status: 'ACTIVE', periodStart: TODAY });
    await m.ok(principal, REFUND, { paymentId: payment });
    expect(await read(principal, before.id)).toMatchObject({ status: 'LAPSED', periodStart: before.periodStart, periodEnd: before.periodEnd });
  });

  it('in part reopens the invoice for what was refunded and holds the period back until that is paid again', async () => {
    const principal = principalFor();
    const { before, invoice } = await renewing(principal, {}, endingIn(5));
    const payment = await pay(principal, invoice.id, 5000);
    await m.ok(principal, REFUND, { paymentId: payment, amount: 1000 });
    expect((await m.ok(principal, INVOICE, { id: invoice.id })).invoice).toMatchObject({ status: 'OPEN', amountPaid: 5000, amountRefunded: 1000 });
    expect(await read(principal, before.id)).toMatchObject({ status: 'ACTIVE', periodEnd: before.periodEnd });
    expect(await m.fails(principal, RENEW, { id: before.id }), 'the reopened invoice is the renewal owed').toMatchObject({ reason: 'renewal_pending', existingId: invoice.id });
    await pay(principal, invoice.id, 1000);
    expect(await read(principal, before.id)).toMatchObject({ periodEnd: invoice.periodEnd });
  });

  it("of a new member's first invoice returns the member to PENDING", async () => {
    const principal = principalFor();
    const category = (await m.ok(principal, CATEGORY, { name: `First ${++counter}`, feeAmount: 3000, currency: 'EUR', period: 'YEARLY' })).createMemberCategory;
    const x = (await m.ok(principal, CREATE_MEMBER, { name: 'New', email: uniqueEmail('first'), categoryId: category.id })).createMember as MemberView;
    const [first] = (await m.ok(principal, INVOICES, { memberId: x.id })).invoices.data;
    const payment = await pay(principal, first.id, 3000);
    expect((await read(principal, x.id)).status).toBe('ACTIVE');
    await m.ok(principal, REFUND, { paymentId: payment });
    expect((await read(principal, x.id)).status).toBe('PENDING');
    await pay(principal, first.id, 3000);
    expect((await read(principal, x.id)).status).toBe('ACTIVE');
  });

  it('racing payments: whatever order they and a refund commit in, the member holds the period exactly when the invoice ends PAID', async () => {
    const principal = principalFor();
    const cases = await Promise.all(Array.from({ length: 8 }, () => renewing(principal, {}, endingIn(5))));
    const outcomes = await Promise.all(
      cases.map(async ({ before, invoice }) => {
        const first = await pay(principal, invoice.id, 2000);
        // 2000 paid of 5000; then at once: 3000 more (covers it), 1000 more, and 1000 of the first refunded.
        await Promise.all([
          m.gql(principal, PAY, { invoiceId: invoice.id, amount: 3000, method: 'CARD' }),
          m.gql(principal, PAY, { invoiceId: invoice.id, amount: 1000, method: 'CARD' }),
          m.gql(principal, REFUND, { paymentId: first, amount: 1000 }),
        ]);
        const stored = (await m.ok(principal, INVOICE, { id: invoice.id })).invoice;
        const member = await read(principal, before.id);
        expect(stored.amountPaid - stored.amountRefunded === 5000).toBe(stored.status === 'PAID');
        expect(member.periodEnd, `invoice ${stored.status}`).toBe(stored.status === 'PAID' ? invoice.periodEnd : before.periodEnd);
        expect(member.periodStart).toBe(before.periodStart);
        return stored.status;
      }),
    );
    expect(outcomes.length).toBe(8);
  });
});
