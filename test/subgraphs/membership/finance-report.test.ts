import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { principalFor } from '../../support/subgraph-harness.js';
import { CREATE_CATEGORY, CREATE_INVOICE, CREATE_MEMBER, PAY, REFUND, startMembership, TODAY, uniqueEmail, type Membership } from './finance-support.js';

let m: Membership;
beforeAll(async () => {
  m = await startMembership();
});
afterAll(async () => {
  await m?.close();
});

/** mulberry32: the same generated data on every run. */
function random(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const FIGURES = 'invoiced payments paymentCount refunds refundCount revenue outstanding overdue';
const REPORT = `query($from: LocalDate!, $to: LocalDate!) {
  financeReport(from: $from, to: $to) {
    from to asOf
    currencies { currency totals { ${FIGURES} } byMonth { month ${FIGURES} } byCategory { categoryId categoryName ${FIGURES} } }
  }
}`;
const CSV = `query($from: LocalDate!, $to: LocalDate!) { financeReportCsv(from: $from, to: $to) }`;

type Figures = Record<'invoiced' | 'payments' | 'paymentCount' | 'refunds' | 'refundCount' | 'revenue' | 'outstanding' | 'overdue', number>;
const zero = (): Figures => ({ invoiced: 0, payments: 0, paymentCount: 0, refunds: 0, refundCount: 0, revenue: 0, outstanding: 0, overdue: 0 });

function dayBetween(rand: () => number, from: string, to: string): string {
  const a = Date.parse(`${from}T00:00:00Z`);
  const b = Date.parse(`${to}T00:00:00Z`);
  return new Date(a + Math.floor(rand() * ((b - a) / 86_400_000 + 1)) * 86_400_000).toISOString().slice(0, 10);
}

describe('financeReport over generated data', () => {
  it('equals the sums of the stored invoices, payments and refunds, per currency, month and category', async () => {
    const rand = random(20261122);
    const principal = principalFor();
    const categories: { id: string; name: string; currency: string }[] = [];
    for (const [name, currency] of [['Regular', 'EUR'], ['Student', 'EUR'], ['Overseas', 'USD']]) {
      const c = (await m.ok(principal, CREATE_CATEGORY, { name, feeAmount: 0, currency, period: 'YEARLY' })).createMemberCategory;
      categories.push({ id: c.id, name, currency });
    }
    const members: { id: string; currency: string }[] = [];
    for (let i = 0; i < 24; i++) {
      const category = i % 4 === 3 ? null : categories[i % 3];
      const id = (await m.ok(principal, CREATE_MEMBER, { name: `Gen ${i}`, email: uniqueEmail('gen'), categoryId: category?.id ?? null })).createMember.id;
      members.push({ id, currency: category?.currency ?? 'EUR' });
    }
    // Invoices in every state, issued over a span wider than the window.
    for (let i = 0; i < 90; i++) {
      const member = members[Math.floor(rand() * members.length)];
      const total = 500 + Math.floor(rand() * 20000);
      const draft = rand() < 0.08;
      const invoice = (
        await m.ok(principal, CREATE_INVOICE, {
          memberId: member.id,
          currency: member.currency,
          lines: [{ description: 'Generated', unitAmount: total }],
          status: draft ? 'DRAFT' : 'OPEN',
        })
      ).createInvoice;
      if (draft) continue;
      const issuedOn = dayBetween(rand, '2024-11-01', '2026-02-28');
      await m.sql('update membership.invoice set issued_on = ?, due_on = ?::date + 30 where id = ?', [issuedOn, issuedOn, invoice.id]);
      const roll = rand();
      if (roll < 0.1) {
        await m.ok(principal, `mutation($id: ID!) { voidInvoice(id: $id) { id } }`, { id: invoice.id });
        continue;
      }
      if (roll < 0.2) await m.ok(principal, `mutation($id: ID!) { markInvoiceUncollectible(id: $id) { id } }`, { id: invoice.id });
      let left = total;
      const payments = Math.floor(rand() * 3);
      for (let p = 0; p < payments && left > 0; p++) {
        const amount = p === payments - 1 && rand() < 0.6 ? left : 1 + Math.floor(rand() * left);
        const receivedAt = `${dayBetween(rand, issuedOn, '2026-03-31')}T${String(Math.floor(rand() * 24)).padStart(2, '0')}:30:00.000Z`;
        const payment = (await m.ok(principal, PAY, { invoiceId: invoice.id, amount, method: 'CARD', receivedAt })).createPayment;
        left -= amount;
        if (rand() < 0.25) {
          const refund = (await m.ok(principal, REFUND, { paymentId: payment.id, amount: 1 + Math.floor(rand() * amount) })).createRefund;
          const at = `${dayBetween(rand, receivedAt.slice(0, 10), '2026-03-31')}T23:59:59.999Z`;
          await m.sql('update membership.refund set created_at = ? where id = ?', [at, refund.id]);
          left += refund.amount;
        }
      }
    }
    // Boundary rows: a payment at the window's first instant, one just after its last.
    const edge = members[0];
    const edgeInvoice = (await m.ok(principal, CREATE_INVOICE, { memberId: edge.id, currency: edge.currency, lines: [{ description: 'Edge', unitAmount: 300 }] })).createInvoice;
    await m.ok(principal, PAY, { invoiceId: edgeInvoice.id, amount: 100, method: 'CASH', receivedAt: '2025-01-01T00:00:00.000Z' });
    await m.ok(principal, PAY, { invoiceId: edgeInvoice.id, amount: 100, method: 'CASH', receivedAt: '2026-01-01T00:00:00.000Z' });

    const from = '2025-01-01';
    const to = '2025-12-31';
    const report = (await m.ok(principal, REPORT, { from, to })).financeReport;

    // The same figures from the stored rows, by the documented definitions.
    const invoices = await m.sql(`select currency, category_id, status, total, amount_paid, amount_refunded, to_char(issued_on, 'YYYY-MM-DD') as issued_on, to_char(due_on, 'YYYY-MM-DD') as due_on from membership.invoice where account_id = ?`, [principal.accountId]);
    const payments = await m.sql('select currency, category_id, amount, received_at from membership.payment where account_id = ?', [principal.accountId]);
    const refunds = await m.sql('select currency, category_id, amount, created_at from membership.refund where account_id = ?', [principal.accountId]);
    const expected = new Map<string, { totals: Figures; months: Map<string, Figures>; categories: Map<string | null, Figures> }>();
    const bucket = (currency: string, month: string, category: string | null) => {
      let e = expected.get(currency);
      if (!e) {
        const months = new Map<string, Figures>();
        for (let i = 1; i <= 12; i++) months.set(`2025-${String(i).padStart(2, '0')}`, zero());
        e = { totals: zero(), months, categories: new Map() };
        expected.set(currency, e);
      }
      if (!e.categories.has(category)) e.categories.set(category, zero());
      return [e.totals, e.months.get(month)!, e.categories.get(category)!];
    };
    const inWindow = (iso: string) => iso >= `${from}T00:00:00.000Z` && iso < '2026-01-01T00:00:00.000Z';
    for (const i of invoices) {
      if (!i.issued_on || i.issued_on < from || i.issued_on > to) continue;
      const owed = i.total - i.amount_paid + i.amount_refunded;
      for (const f of bucket(i.currency, i.issued_on.slice(0, 7), i.category_id)) {
        if (['open', 'paid', 'uncollectible'].includes(i.status)) f.invoiced += i.total;
        if (i.status === 'open') f.outstanding += owed;
        if (i.status === 'open' && i.due_on < TODAY) f.overdue += owed;
      }
    }
    for (const p of payments) {
      const iso = new Date(p.received_at).toISOString();
      if (!inWindow(iso)) continue;
      for (const f of bucket(p.currency, iso.slice(0, 7), p.category_id)) {
        f.payments += p.amount;
        f.paymentCount += 1;
      }
    }
    for (const r of refunds) {
      const iso = new Date(r.created_at).toISOString();
      if (!inWindow(iso)) continue;
      for (const f of bucket(r.currency, iso.slice(0, 7), r.category_id)) {
        f.refunds += r.amount;
        f.refundCount += 1;
      }
    }
    for (const e of expected.values()) for (const f of [e.totals, ...e.months.values(), ...e.categories.values()]) f.revenue = f.payments - f.refunds;

    const names = new Map<string | null, string | null>([[null, null], ...categories.map((c) => [c.id, c.name] as [string, string])]);
    expect(report).toMatchObject({ from, to, asOf: TODAY });
    expect(report.currencies.map((c: { currency: string }) => c.currency)).toEqual([...expected.keys()].sort());
    for (const c of report.currencies) {
      const e = expected.get(c.currency)!;
      expect(c.totals, c.currency).toEqual(e.totals);
      expect(c.byMonth).toEqual([...e.months.entries()].map(([month, f]) => ({ month, ...f })));
      const byCategory = new Map(c.byCategory.map(({ categoryId, categoryName, ...f }: { categoryId: string | null; categoryName: string | null }) => [categoryId, { categoryName, f }]));
      expect([...byCategory.keys()].sort()).toEqual([...e.categories.keys()].sort());
      for (const [id, f] of e.categories) expect(byCategory.get(id)).toEqual({ categoryName: names.get(id), f });
    }
    // The data exercised every figure.
    const eur = expected.get('EUR')!.totals;
    for (const key of Object.keys(eur) as (keyof Figures)[]) expect(eur[key], key).toBeGreaterThan(0);

    const csv = (await m.ok(principal, CSV, { from, to })).financeReportCsv as string;
    const lines = csv.trimEnd().split('\r\n');
    expect(lines[0]).toBe('currency,dimension,month,category_id,category_name,invoiced,payments,payment_count,refunds,refund_count,revenue,outstanding,overdue');
    for (const c of report.currencies) {
      const t = c.totals;
      expect(lines).toContain(`${c.currency},total,,,,${[t.invoiced, t.payments, t.paymentCount, t.refunds, t.refundCount, t.revenue, t.outstanding, t.overdue].join(',')}`);
    }
    expect(lines).toHaveLength(1 + report.currencies.reduce((n: number, c: { byMonth: unknown[]; byCategory: unknown[] }) => n + 1 + c.byMonth.length + c.byCategory.length, 0));
  }, 60_000);

  it('is empty for another account and refuses an inverted window', async () => {
    expect((await m.ok(principalFor(), REPORT, { from: '2025-01-01', to: '2025-12-31' })).financeReport.currencies).toEqual([]);
    expect(await m.fails(principalFor(), REPORT, { from: '2025-12-31', to: '2025-01-01' })).toMatchObject({ code: 'BAD_USER_INPUT', param: 'to' });
    expect(await m.fails(principalFor(), REPORT, { from: '2000-01-01', to: '2025-01-01' })).toMatchObject({ code: 'BAD_USER_INPUT', param: 'to' });
  });
});
