import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '../../../core/principal.js';
import { principalFor } from '../../support/subgraph-harness.js';
import { AUDIT, CREATE_INVOICE, CREATE_MEMBER, INVOICES, PAY, REFUND, startMembership, TODAY, uniqueEmail, utcDate, Y, M, D, type Membership } from './finance-support.js';

let m: Membership;
beforeAll(async () => {
  m = await startMembership();
});
afterAll(async () => {
  await m?.close();
});

interface InvoiceView {
  id: string;
  number: string | null;
  status: string;
  total: number;
  amountPaid: number;
  amountRefunded: number;
  amountRemaining: number;
  issuedOn: string | null;
  dueOn: string;
  overdue: boolean;
}

async function newMember(principal: Principal): Promise<string> {
  return (await m.ok(principal, CREATE_MEMBER, { name: 'Payer', email: uniqueEmail() })).createMember.id;
}

async function invoice(principal: Principal, args: Record<string, unknown> = {}): Promise<InvoiceView> {
  const memberId = (args.memberId as string | undefined) ?? (await newMember(principal));
  return (await m.ok(principal, CREATE_INVOICE, { memberId, currency: 'EUR', lines: [{ description: 'Dues', unitAmount: 10000 }], ...args })).createInvoice;
}

const act = (name: string) => `mutation($id: ID!) { ${name}(id: $id) { id status number amountRemaining } }`;
const GET = `query($id: ID!) { invoice(id: $id) { id status total amountPaid amountRefunded amountRemaining member { id name } } }`;

async function stored(id: string) {
  return (await m.sql('select status, amount_paid, amount_refunded, total from membership.invoice where id = ?', [id]))[0];
}

describe('invoices', () => {
  it('adds up the lines and numbers finalised invoices per account and mode, INV-000001 onwards', async () => {
    const principal = principalFor();
    const first = await invoice(principal, {
      lines: [
        { description: 'Dues', quantity: 2, unitAmount: 4500 },
        { description: 'Discount', unitAmount: -1000 },
      ],
    });
    expect(first).toMatchObject({ number: 'INV-000001', status: 'OPEN', total: 8000, amountRemaining: 8000, issuedOn: TODAY, dueOn: utcDate(Y, M, D + 30), overdue: false });
    expect((await invoice(principal)).number).toBe('INV-000002');
    const sandbox = { ...principal, kind: 'test' as const, mode: 'test' as const };
    expect((await invoice(sandbox)).number).toBe('INV-000001');
    expect((await invoice(principalFor())).number).toBe('INV-000001');
  });

  it('keeps a draft unnumbered until it is finalised; numbers stay gapless under concurrent finalisation', async () => {
    const principal = principalFor();
    const drafts = await Promise.all(Array.from({ length: 12 }, () => invoice(principal, { status: 'DRAFT' })));
    expect(drafts.every((d) => d.number === null && d.status === 'DRAFT' && d.issuedOn === null)).toBe(true);
    const finalised = await Promise.all(drafts.map((d) => m.ok(principal, act('finalizeInvoice'), { id: d.id })));
    const numbers = finalised.map((f) => f.finalizeInvoice.number).sort();
    expect(numbers).toEqual(Array.from({ length: 12 }, (_, i) => `INV-${String(i + 1).padStart(6, '0')}`));
    expect(await m.fails(principal, act('finalizeInvoice'), { id: drafts[0].id })).toMatchObject({ code: 'CONFLICT', reason: 'illegal_transition' });
  });

  it('deletes drafts only: a finalised invoice is never deleted', async () => {
    const principal = principalFor();
    const draft = await invoice(principal, { status: 'DRAFT' });
    const open = await invoice(principal);
    expect((await m.ok(principal, `mutation($id: ID!) { deleteInvoice(id: $id) { id deleted } }`, { id: draft.id })).deleteInvoice).toEqual({ id: draft.id, deleted: true });
    expect(await m.fails(principal, `mutation($id: ID!) { deleteInvoice(id: $id) { id } }`, { id: open.id })).toMatchObject({ code: 'CONFLICT', reason: 'illegal_transition' });
    expect(await stored(open.id)).toMatchObject({ status: 'open' });
    await m.ok(principal, act('voidInvoice'), { id: open.id });
    expect(await m.fails(principal, `mutation($id: ID!) { deleteInvoice(id: $id) { id } }`, { id: open.id })).toMatchObject({ reason: 'illegal_transition' });
  });

  it('allows only the legal transitions', async () => {
    const principal = principalFor();
    const paid = await invoice(principal);
    await m.ok(principal, PAY, { invoiceId: paid.id, amount: 10000, method: 'CASH' });
    expect(await m.fails(principal, act('voidInvoice'), { id: paid.id })).toMatchObject({ code: 'CONFLICT', reason: 'illegal_transition' });
    expect(await m.fails(principal, act('markInvoiceUncollectible'), { id: paid.id })).toMatchObject({ reason: 'illegal_transition' });
    expect(await stored(paid.id)).toMatchObject({ status: 'paid' });

    const draft = await invoice(principal, { status: 'DRAFT' });
    expect(await m.fails(principal, act('voidInvoice'), { id: draft.id })).toMatchObject({ reason: 'illegal_transition' });

    const bad = await invoice(principal);
    expect((await m.ok(principal, act('markInvoiceUncollectible'), { id: bad.id })).markInvoiceUncollectible.status).toBe('UNCOLLECTIBLE');
    await m.ok(principal, PAY, { invoiceId: bad.id, amount: 10000, method: 'BANK_TRANSFER' });
    expect(await stored(bad.id)).toMatchObject({ status: 'paid' });

    const voided = await invoice(principal);
    expect((await m.ok(principal, act('voidInvoice'), { id: voided.id })).voidInvoice).toMatchObject({ status: 'VOID', amountRemaining: 0 });
    expect(await m.fails(principal, act('voidInvoice'), { id: voided.id })).toMatchObject({ reason: 'illegal_transition' });
    expect(await m.fails(principal, PAY, { invoiceId: voided.id, amount: 1, method: 'CASH' })).toMatchObject({ code: 'CONFLICT', reason: 'invoice_not_payable' });
    const actions = (await m.ok(principal, AUDIT, { entityId: bad.id })).auditEvents.data.map((e: { action: string }) => e.action);
    expect(actions).toEqual(['invoice.paid', 'invoice.marked_uncollectible', 'invoice.finalized', 'invoice.created']);
  });

  it.each([
    ['lines adding up below zero', { lines: [{ description: 'Credit', unitAmount: -5 }] }, 'lines'],
    ['no lines', { lines: [] }, 'lines'],
    ['a bad currency', { currency: 'E1' }, 'currency'],
    ['a line quantity of zero', { lines: [{ description: 'x', quantity: 0, unitAmount: 5 }] }, 'lines.0.quantity'],
  ])('refuses %s with BAD_USER_INPUT', async (_label, args, param) => {
    const principal = principalFor();
    expect(await m.fails(principal, CREATE_INVOICE, { memberId: await newMember(principal), currency: 'EUR', lines: [{ description: 'x', unitAmount: 1 }], ...args })).toMatchObject({
      code: 'BAD_USER_INPUT',
      param,
    });
    expect(await m.sql('select 1 from membership.invoice where account_id = ?', [principal.accountId])).toHaveLength(0);
  });

  it('refuses a member of another account with NOT_FOUND member_not_found on memberId', async () => {
    const other = await newMember(principalFor());
    expect(await m.fails(principalFor(), CREATE_INVOICE, { memberId: other, currency: 'EUR', lines: [{ description: 'x', unitAmount: 1 }] })).toMatchObject({
      code: 'NOT_FOUND',
      param: 'memberId',
      reason: 'member_not_found',
    });
  });

  it('filters by status, member, issue date and overdue', async () => {
    const principal = principalFor();
    const memberA = await newMember(principal);
    const a = await invoice(principal, { memberId: memberA });
    const b = await invoice(principal);
    const c = await invoice(principal, { status: 'DRAFT', memberId: memberA });
    await m.sql(`update membership.invoice set issued_on = '2025-01-15', due_on = '2025-02-14' where id = ?`, [b.id]);
    const ids = async (args: Record<string, unknown>) => (await m.ok(principal, INVOICES, args)).invoices.data.map((i: { id: string }) => i.id).sort();
    expect(await ids({ memberId: memberA })).toEqual([a.id, c.id].sort());
    expect(await ids({ status: 'DRAFT' })).toEqual([c.id]);
    expect(await ids({ issuedFrom: '2025-01-01', issuedTo: '2025-01-31' })).toEqual([b.id]);
    expect(await ids({ issuedFrom: TODAY })).toEqual([a.id]);
    expect(await ids({ overdue: true })).toEqual([b.id]);
    expect(await ids({ overdue: false })).toEqual([a.id, c.id].sort());
  });

  it('keeps invoices and payments of an archived member, still naming it', async () => {
    const principal = principalFor();
    const memberId = await newMember(principal);
    const inv = await invoice(principal, { memberId });
    await m.ok(principal, PAY, { invoiceId: inv.id, amount: 4000, method: 'CARD' });
    await m.ok(principal, `mutation($id: ID!) { deleteMember(id: $id) { deleted } }`, { id: memberId });
    const found = (await m.ok(principal, GET, { id: inv.id })).invoice;
    expect(found).toMatchObject({ amountPaid: 4000, member: { id: memberId, name: 'Payer' } });
    expect((await m.ok(principal, INVOICES, { memberId })).invoices.data).toHaveLength(1);
    expect((await m.ok(principal, `query($id: ID!) { payments(memberId: $id) { data { amount } } }`, { id: memberId })).payments.data).toEqual([{ amount: 4000 }]);
  });
});

describe('payments', () => {
  it('adds partial payments up; the one that pays the rest makes the invoice PAID', async () => {
    const principal = principalFor();
    const inv = await invoice(principal);
    const first = (await m.ok(principal, PAY, { invoiceId: inv.id, amount: 2500, method: 'CARD', receivedAt: '2026-01-05T10:00:00.000Z' })).createPayment;
    expect(first).toMatchObject({ amount: 2500, currency: 'EUR', method: 'CARD', invoice: { status: 'OPEN', amountRemaining: 7500 } });
    expect(new Date(first.receivedAt).toISOString()).toBe('2026-01-05T10:00:00.000Z');
    expect(await m.fails(principal, PAY, { invoiceId: inv.id, amount: 7501, method: 'CARD' })).toMatchObject({ code: 'BAD_USER_INPUT', param: 'amount', reason: 'amount_too_large' });
    const last = (await m.ok(principal, PAY, { invoiceId: inv.id, amount: 7500, method: 'CASH' })).createPayment;
    expect(last.invoice).toMatchObject({ status: 'PAID', amountRemaining: 0 });
    expect(await stored(inv.id)).toMatchObject({ status: 'paid', amount_paid: 10000 });
    expect(await m.fails(principal, PAY, { invoiceId: inv.id, amount: 1, method: 'CASH' })).toMatchObject({ code: 'CONFLICT', reason: 'invoice_not_payable' });
  });

  it('refuses a draft, a zero amount, another currency and an unknown invoice', async () => {
    const principal = principalFor();
    const draft = await invoice(principal, { status: 'DRAFT' });
    expect(await m.fails(principal, PAY, { invoiceId: draft.id, amount: 1, method: 'CASH' })).toMatchObject({ reason: 'invoice_not_payable' });
    const open = await invoice(principal);
    expect(await m.fails(principal, PAY, { invoiceId: open.id, amount: 0, method: 'CASH' })).toMatchObject({ code: 'BAD_USER_INPUT', param: 'amount' });
    expect(await m.fails(principal, PAY, { invoiceId: open.id, amount: 5, method: 'CASH', currency: 'usd' })).toMatchObject({ reason: 'currency_mismatch', param: 'currency' });
    expect(await m.fails(principal, PAY, { invoiceId: '00000000-0000-4000-8000-ffffffffffff', amount: 5, method: 'CASH' })).toMatchObject({
      code: 'NOT_FOUND',
      param: 'invoiceId',
      reason: 'invoice_not_found',
    });
    expect(await m.fails(principalFor(), PAY, { invoiceId: open.id, amount: 5, method: 'CASH' })).toMatchObject({ reason: 'invoice_not_found' });
    expect(await stored(open.id)).toMatchObject({ amount_paid: 0 });
  });

  it('never lets concurrent payments together exceed what is owed', async () => {
    const principal = principalFor();
    const inv = await invoice(principal);
    const results = await Promise.all(Array.from({ length: 10 }, () => m.gql(principal, PAY, { invoiceId: inv.id, amount: 3000, method: 'CARD' })));
    const succeeded = results.filter((r) => !r.errors);
    expect(succeeded).toHaveLength(3);
    expect(results.filter((r) => r.errors).every((r) => r.errors![0].extensions?.reason === 'amount_too_large')).toBe(true);
    expect(await stored(inv.id)).toMatchObject({ status: 'open', amount_paid: 9000 });
    const sum = await m.sql('select sum(amount)::int as s, count(*)::int as n from membership.payment where invoice_id = ?', [inv.id]);
    expect(sum[0]).toEqual({ s: 9000, n: 3 });
  });
});

describe('refunds', () => {
  async function paidInvoice(principal: Principal) {
    const inv = await invoice(principal);
    const payment = (await m.ok(principal, PAY, { invoiceId: inv.id, amount: 10000, method: 'CARD' })).createPayment;
    return { inv, payment };
  }

  it('adds partial refunds up to at most the payment; the invoice reopens for what is no longer covered', async () => {
    const principal = principalFor();
    const { inv, payment } = await paidInvoice(principal);
    const refund = (await m.ok(principal, REFUND, { paymentId: payment.id, amount: 3000, reason: 'Overcharged' })).createRefund;
    expect(refund).toMatchObject({ paymentId: payment.id, invoiceId: inv.id, amount: 3000, currency: 'EUR', reason: 'Overcharged' });
    expect((await m.ok(principal, GET, { id: inv.id })).invoice).toMatchObject({ status: 'OPEN', amountPaid: 10000, amountRefunded: 3000, amountRemaining: 3000 });
    expect(await m.fails(principal, REFUND, { paymentId: payment.id, amount: 7001 })).toMatchObject({ code: 'BAD_USER_INPUT', param: 'amount', reason: 'amount_too_large' });
    const rest = (await m.ok(principal, REFUND, { paymentId: payment.id })).createRefund;
    expect(rest.amount).toBe(7000);
    expect(await m.fails(principal, REFUND, { paymentId: payment.id, amount: 1 })).toMatchObject({ code: 'CONFLICT', reason: 'payment_fully_refunded' });
    expect(await stored(inv.id)).toMatchObject({ status: 'open', amount_paid: 10000, amount_refunded: 10000 });
    // Paid again in full, the invoice is PAID again; a reopened invoice can also be voided.
    await m.ok(principal, PAY, { invoiceId: inv.id, amount: 10000, method: 'CASH' });
    expect(await stored(inv.id)).toMatchObject({ status: 'paid' });
    const actions = (await m.ok(principal, AUDIT, { entity: 'invoice', entityId: inv.id })).auditEvents.data.map((e: { action: string }) => e.action);
    expect(actions).toEqual(['invoice.paid', 'invoice.reopened', 'invoice.paid', 'invoice.finalized', 'invoice.created']);
  });

  it('never lets two or more concurrent refunds together exceed the payment', async () => {
    const principal = principalFor();
    const { inv, payment } = await paidInvoice(principal);
    const results = await Promise.all(Array.from({ length: 10 }, () => m.gql(principal, REFUND, { paymentId: payment.id, amount: 3000 })));
    expect(results.filter((r) => !r.errors)).toHaveLength(3);
    expect(results.filter((r) => r.errors).every((r) => r.errors![0].extensions?.reason === 'amount_too_large')).toBe(true);
    const sums = await m.sql('select sum(amount)::int as s from membership.refund where payment_id = ?', [payment.id]);
    expect(sums[0].s).toBe(9000);
    expect((await m.sql('select amount_refunded from membership.payment where id = ?', [payment.id]))[0].amount_refunded).toBe(9000);
    expect(await stored(inv.id)).toMatchObject({ status: 'open', amount_refunded: 9000 });
  });

  it('never lets two concurrent full refunds both succeed', async () => {
    const principal = principalFor();
    const { payment } = await paidInvoice(principal);
    const results = await Promise.all([m.gql(principal, REFUND, { paymentId: payment.id }), m.gql(principal, REFUND, { paymentId: payment.id })]);
    expect(results.map((r) => r.errors?.[0]?.extensions?.reason ?? 'ok').sort()).toEqual(['ok', 'payment_fully_refunded']);
    expect((await m.sql('select sum(amount)::int as s from membership.refund where payment_id = ?', [payment.id]))[0].s).toBe(10000);
  });

  it('answers NOT_FOUND payment_not_found for a payment of another account', async () => {
    const { payment } = await paidInvoice(principalFor());
    expect(await m.fails(principalFor(), REFUND, { paymentId: payment.id })).toMatchObject({ code: 'NOT_FOUND', param: 'paymentId', reason: 'payment_not_found' });
  });

  it('records who made each payment and refund in the audit trail', async () => {
    const principal = principalFor();
    const { payment } = await paidInvoice(principal);
    const refund = (await m.ok(principal, REFUND, { paymentId: payment.id, amount: 100 })).createRefund;
    const events = (await m.ok(principal, AUDIT, { entity: 'payment', entityId: payment.id })).auditEvents.data;
    expect(events.map((e: { action: string }) => e.action)).toEqual(['payment.refunded', 'payment.created']);
    expect(events[0]).toMatchObject({ keyId: principal.keyId, before: { amountRefunded: 0 }, after: { amountRefunded: 100 } });
    const [refunded] = (await m.ok(principal, AUDIT, { entityId: refund.id })).auditEvents.data;
    expect(refunded).toMatchObject({ entity: 'refund', action: 'refund.created', before: null, after: { amount: 100, paymentId: payment.id } });
    expect((await m.ok(principalFor(), AUDIT, { entityId: refund.id })).auditEvents.data).toEqual([]);
  });
});
