import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '../../../core/principal.js';
import { principalFor } from '../../support/subgraph-harness.js';
import {
  AUDIT,
  CREATE_CATEGORY,
  CREATE_MEMBER,
  INVOICES,
  MEMBER_FIELDS,
  PAY,
  RENEW,
  startMembership,
  TODAY,
  uniqueEmail,
  utcDate,
  Y,
  M,
  D,
  type Membership,
} from './finance-support.js';

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
  categoryId: string | null;
  joinedOn: string;
  periodStart: string;
  periodEnd: string | null;
  graceEndsOn: string | null;
}

let categoryCounter = 0;
async function category(principal: Principal, args: Record<string, unknown> = {}): Promise<{ id: string; name: string }> {
  const data = await m.ok(principal, CREATE_CATEGORY, {
    name: `Category ${++categoryCounter}`,
    feeAmount: 5000,
    currency: 'eur',
    period: 'YEARLY',
    ...args,
  });
  return data.createMemberCategory;
}

async function member(principal: Principal, args: Record<string, unknown> = {}): Promise<MemberView> {
  return (await m.ok(principal, CREATE_MEMBER, { name: 'Member', email: uniqueEmail(), ...args })).createMember;
}

const action = (name: string) => `mutation($id: ID!) { ${name}(id: $id) { ${MEMBER_FIELDS} } }`;
const LIST = `query($status: MemberStatus, $categoryId: ID, $search: String, $joinedFrom: LocalDate, $joinedTo: LocalDate, $expiringFrom: LocalDate, $expiringTo: LocalDate, $sort: MemberSort, $limit: Int, $after: String) {
  members(status: $status, categoryId: $categoryId, search: $search, joinedFrom: $joinedFrom, joinedTo: $joinedTo, expiringFrom: $expiringFrom, expiringTo: $expiringTo, sort: $sort, limit: $limit, after: $after) { data { ${MEMBER_FIELDS} } hasMore nextCursor }
}`;
async function list(principal: Principal, args: Record<string, unknown> = {}) {
  return (await m.ok(principal, LIST, args)).members as { data: MemberView[]; hasMore: boolean; nextCursor: string | null };
}

describe('member categories', () => {
  it('creates categories with their terms and lists them newest first', async () => {
    const principal = principalFor();
    const yearly = await m.ok(principal, CREATE_CATEGORY, { name: 'Regular', feeAmount: 12000, currency: 'eur', period: 'YEARLY', graceDays: 30 });
    expect(yearly.createMemberCategory).toMatchObject({
      name: 'Regular',
      feeAmount: 12000,
      currency: 'EUR',
      period: 'YEARLY',
      periodYears: null,
      renewalBasis: 'ROLLING',
      graceDays: 30,
      livemode: true,
    });
    const fixed = await m.ok(principal, CREATE_CATEGORY, {
      name: 'Calendar',
      feeAmount: 3000,
      currency: 'GBP',
      period: 'EVERY_N_YEARS',
      periodYears: 2,
      renewalBasis: 'FIXED',
      fixedMonth: 1,
      fixedDay: 1,
    });
    expect(fixed.createMemberCategory).toMatchObject({ periodYears: 2, renewalBasis: 'FIXED', fixedMonth: 1, fixedDay: 1, graceDays: 0 });
    const listed = await m.ok(principal, '{ memberCategories { data { name } hasMore } }');
    expect(listed.memberCategories).toEqual({ data: [{ name: 'Calendar' }, { name: 'Regular' }], hasMore: false });
    expect((await m.ok(principalFor(), '{ memberCategories { data { name } } }')).memberCategories.data).toEqual([]);
  });

  it.each([
    ['EVERY_N_YEARS without periodYears', { period: 'EVERY_N_YEARS' }, 'periodYears'],
    ['periodYears with YEARLY', { periodYears: 3 }, 'periodYears'],
    ['FIXED without fixedMonth', { renewalBasis: 'FIXED', fixedDay: 1 }, 'fixedMonth'],
    ['FIXED without fixedDay', { renewalBasis: 'FIXED', fixedMonth: 1 }, 'fixedDay'],
    ['a fixed day past the 28th', { renewalBasis: 'FIXED', fixedMonth: 1, fixedDay: 29 }, 'fixedDay'],
    ['FIXED and LIFETIME', { period: 'LIFETIME', renewalBasis: 'FIXED', fixedMonth: 1, fixedDay: 1 }, 'renewalBasis'],
    ['a negative fee', { feeAmount: -1 }, 'feeAmount'],
    ['a four-letter currency', { currency: 'EURO' }, 'currency'],
    ['negative grace days', { graceDays: -1 }, 'graceDays'],
  ])('refuses %s with BAD_USER_INPUT', async (_label, args, param) => {
    const principal = principalFor();
    const extensions = await m.fails(principal, CREATE_CATEGORY, { name: 'Bad', feeAmount: 100, currency: 'EUR', period: 'YEARLY', ...args });
    expect(extensions).toMatchObject({ code: 'BAD_USER_INPUT', param });
    expect(await m.sql('select 1 from membership.member_category where account_id = ?', [principal.accountId])).toHaveLength(0);
  });

  it('refuses a second category of the same name with CONFLICT category_name_taken', async () => {
    const principal = principalFor();
    await category(principal, { name: 'Student' });
    expect(await m.fails(principal, CREATE_CATEGORY, { name: 'Student', feeAmount: 1, currency: 'EUR', period: 'MONTHLY' })).toMatchObject({
      code: 'CONFLICT',
      reason: 'category_name_taken',
    });
  });

  it('refuses a member in a category of another account with NOT_FOUND on categoryId', async () => {
    const foreign = await category(principalFor());
    expect(await m.fails(principalFor(), CREATE_MEMBER, { name: 'X', email: uniqueEmail(), categoryId: foreign.id })).toMatchObject({
      code: 'NOT_FOUND',
      param: 'categoryId',
      reason: 'member_category_not_found',
    });
  });
});

describe('joining', () => {
  it('makes a member of a paid category PENDING with an open invoice for the first period; paying it activates', async () => {
    const principal = principalFor();
    const regular = await category(principal, { feeAmount: 12000, graceDays: 14 });
    const joined = await member(principal, { categoryId: regular.id });
    expect(joined).toMatchObject({ status: 'PENDING', categoryId: regular.id, periodStart: TODAY, periodEnd: utcDate(Y + 1, M, D - 1), graceEndsOn: utcDate(Y + 1, M, D + 13) });
    const [invoice] = (await m.ok(principal, INVOICES, { memberId: joined.id })).invoices.data;
    expect(invoice).toMatchObject({
      number: 'INV-000001',
      kind: 'MEMBERSHIP',
      status: 'OPEN',
      currency: 'EUR',
      total: 12000,
      amountRemaining: 12000,
      issuedOn: TODAY,
      dueOn: TODAY,
      periodStart: TODAY,
      periodEnd: joined.periodEnd,
      lines: [{ description: `${regular.name}, ${TODAY} to ${joined.periodEnd}`, quantity: 1, unitAmount: 12000, amount: 12000 }],
    });

    await m.ok(principal, PAY, { invoiceId: invoice.id, amount: 5000, method: 'CARD' });
    expect((await m.ok(principal, `query($id: ID!) { member(id: $id) { status } }`, { id: joined.id })).member.status).toBe('PENDING');
    await m.ok(principal, PAY, { invoiceId: invoice.id, amount: 7000, method: 'BANK_TRANSFER' });
    expect((await m.ok(principal, `query($id: ID!) { member(id: $id) { status } }`, { id: joined.id })).member.status).toBe('ACTIVE');
    const actions = (await m.ok(principal, AUDIT, { entityId: joined.id })).auditEvents.data.map((e: { action: string }) => e.action);
    expect(actions).toEqual(['member.activated', 'member.created']);
  });

  it('makes a member of a free category, or of none, ACTIVE at once without an invoice', async () => {
    const principal = principalFor();
    const free = await category(principal, { feeAmount: 0 });
    const a = await member(principal, { categoryId: free.id });
    const b = await member(principal);
    expect([a.status, b.status]).toEqual(['ACTIVE', 'ACTIVE']);
    expect((await m.ok(principal, INVOICES)).invoices.data).toEqual([]);
  });

  it('gives a lifetime member no period end and keeps it ACTIVE', async () => {
    const principal = principalFor();
    const lifetime = await category(principal, { period: 'LIFETIME', feeAmount: 0 });
    const joined = await member(principal, { categoryId: lifetime.id, joinedOn: '1990-01-01' });
    expect(joined).toMatchObject({ status: 'ACTIVE', periodStart: '1990-01-01', periodEnd: null, graceEndsOn: null });
  });
});

describe('status from the dates', () => {
  it('is GRACE within the grace days after the period end and LAPSED after them', async () => {
    const principal = principalFor();
    const graceful = await category(principal, { feeAmount: 0, graceDays: 30 });
    const inGrace = await member(principal, { categoryId: graceful.id, joinedOn: utcDate(Y - 1, M, D - 10) });
    const lapsed = await member(principal, { categoryId: graceful.id, joinedOn: utcDate(Y - 1, M, D - 45) });
    expect(inGrace.periodEnd! < TODAY && TODAY <= inGrace.graceEndsOn!).toBe(true);
    expect(inGrace.status).toBe('GRACE');
    expect(lapsed.graceEndsOn! < TODAY).toBe(true);
    expect(lapsed.status).toBe('LAPSED');
  });

  it('filters by every status exactly as the members read', async () => {
    const principal = principalFor();
    const paid = await category(principal, { graceDays: 20 });
    const free = await category(principal, { feeAmount: 0, graceDays: 20 });
    const lifetime = await category(principal, { feeAmount: 0, period: 'LIFETIME' });
    const made = [
      await member(principal, { categoryId: paid.id }),
      await member(principal, { categoryId: free.id }),
      await member(principal, { categoryId: free.id, joinedOn: utcDate(Y - 1, M, D - 5) }),
      await member(principal, { categoryId: free.id, joinedOn: utcDate(Y - 1, M, D - 60) }),
      await member(principal, { categoryId: lifetime.id, joinedOn: '2000-01-01' }),
      await member(principal, { joinedOn: utcDate(Y - 1, M, D) }),
      await member(principal, { joinedOn: utcDate(Y - 1, M, D + 1) }),
    ];
    const suspended = await member(principal, { categoryId: free.id, joinedOn: utcDate(Y - 1, M, D - 60) });
    await m.ok(principal, action('suspendMember'), { id: suspended.id });
    const cancelled = await member(principal, { categoryId: paid.id });
    await m.ok(principal, action('cancelMember'), { id: cancelled.id });

    const all = (await list(principal, { limit: 100 })).data;
    expect(all).toHaveLength(made.length + 2);
    const seen = new Set<string>();
    for (const status of ['PENDING', 'ACTIVE', 'GRACE', 'LAPSED', 'SUSPENDED', 'CANCELLED']) {
      const filtered = (await list(principal, { status, limit: 100 })).data;
      expect(filtered.map((x) => x.id).sort(), status).toEqual(all.filter((x) => x.status === status).map((x) => x.id).sort());
      expect(filtered.length, `some member is ${status}`).toBeGreaterThan(0);
      for (const x of filtered) seen.add(x.id);
    }
    expect(seen.size).toBe(all.length);
  });
});

describe('transitions', () => {
  it('suspends, reinstates and cancels; cancelled is final', async () => {
    const principal = principalFor();
    const x = await member(principal);
    expect((await m.ok(principal, action('suspendMember'), { id: x.id })).suspendMember.status).toBe('SUSPENDED');
    expect(await m.fails(principal, RENEW, { id: x.id })).toMatchObject({ code: 'CONFLICT', reason: 'illegal_transition' });
    expect(await m.fails(principal, action('suspendMember'), { id: x.id })).toMatchObject({ code: 'CONFLICT', reason: 'illegal_transition' });
    expect((await m.ok(principal, action('reinstateMember'), { id: x.id })).reinstateMember.status).toBe('ACTIVE');
    expect((await m.ok(principal, action('cancelMember'), { id: x.id })).cancelMember.status).toBe('CANCELLED');
    for (const name of ['reinstateMember', 'suspendMember', 'cancelMember', 'activateMember', 'renewMember']) {
      expect(await m.fails(principal, action(name), { id: x.id }), name).toMatchObject({ code: 'CONFLICT', reason: 'illegal_transition' });
    }
    const stored = await m.sql('select state from membership.member where id = ?', [x.id]);
    expect(stored[0].state).toBe('cancelled');
    const actions = (await m.ok(principal, AUDIT, { entity: 'member', entityId: x.id })).auditEvents.data;
    expect(actions.map((e: { action: string }) => e.action)).toEqual(['member.cancelled', 'member.reinstated', 'member.suspended', 'member.created']);
    expect(actions[1]).toMatchObject({ keyId: principal.keyId, before: { status: 'suspended' }, after: { status: 'active' } });
  });

  it('activates a pending member explicitly, and refuses to activate an active one', async () => {
    const principal = principalFor();
    const x = await member(principal, { categoryId: (await category(principal)).id });
    expect(await m.fails(principal, action('suspendMember'), { id: x.id })).toMatchObject({ reason: 'illegal_transition' });
    expect(await m.fails(principal, RENEW, { id: x.id })).toMatchObject({ reason: 'illegal_transition' });
    expect((await m.ok(principal, action('activateMember'), { id: x.id })).activateMember.status).toBe('ACTIVE');
    expect(await m.fails(principal, action('activateMember'), { id: x.id })).toMatchObject({ code: 'CONFLICT', reason: 'illegal_transition' });
  });

  it('answers NOT_FOUND for another account’s member', async () => {
    const x = await member(principalFor());
    expect(await m.fails(principalFor(), action('suspendMember'), { id: x.id })).toMatchObject({ code: 'NOT_FOUND', reason: 'member_not_found' });
  });
});

describe('renewMember', () => {
  async function activeMember(principal: Principal, categoryArgs: Record<string, unknown>, joinedOn?: string): Promise<MemberView> {
    const c = await category(principal, categoryArgs);
    const x = await member(principal, { categoryId: c.id, joinedOn });
    return x.status === 'PENDING' ? (await m.ok(principal, action('activateMember'), { id: x.id })).activateMember : x;
  }

  it('invoices the fee for the next period of an active member, and adds the period when the invoice is paid', async () => {
    const principal = principalFor();
    const x = await activeMember(principal, { feeAmount: 9000, graceDays: 10 }, utcDate(Y - 1, M, D + 10));
    const renewed = (await m.ok(principal, RENEW, { id: x.id })).renewMember;
    expect(renewed).toMatchObject({ status: 'ACTIVE', periodStart: x.periodStart, periodEnd: x.periodEnd });
    const newEnd = utcDate(Y + 1, M, D + 9);
    const renewal = (await m.ok(principal, INVOICES, { memberId: x.id })).invoices.data.find((i: { kind: string }) => i.kind === 'RENEWAL');
    expect(renewal).toMatchObject({ status: 'OPEN', total: 9000, periodStart: utcDate(Y, M, D + 10), periodEnd: newEnd, dueOn: utcDate(Y, M, D + 10) });
    await m.ok(principal, PAY, { invoiceId: renewal.id, amount: 9000, method: 'CARD' });
    const [event] = (await m.ok(principal, AUDIT, { entityId: x.id, limit: 1 })).auditEvents.data;
    expect(event).toMatchObject({ action: 'member.renewed', keyId: principal.keyId, before: { periodEnd: x.periodEnd }, after: { periodEnd: newEnd, graceEndsOn: utcDate(Y + 1, M, D + 19), invoiceId: renewal.id } });
  });

  it('extends a member in grace from its period end', async () => {
    const principal = principalFor();
    const x = await activeMember(principal, { feeAmount: 0, graceDays: 30 }, utcDate(Y - 1, M, D - 10));
    expect(x.status).toBe('GRACE');
    const renewed = (await m.ok(principal, RENEW, { id: x.id })).renewMember;
    expect(renewed).toMatchObject({ status: 'ACTIVE', periodStart: x.periodStart });
    expect(renewed.periodEnd).toBe(utcDate(Y + 1, M, D - 11));
  });

  it('starts a lapsed member on a new period today once the renewal is paid', async () => {
    const principal = principalFor();
    const x = await activeMember(principal, { feeAmount: 2500, period: 'QUARTERLY' }, utcDate(Y - 2, M, D));
    expect(x.status).toBe('LAPSED');
    expect((await m.ok(principal, RENEW, { id: x.id })).renewMember).toMatchObject({ status: 'LAPSED', periodEnd: x.periodEnd });
    const renewal = (await m.ok(principal, INVOICES, { memberId: x.id, status: 'OPEN' })).invoices.data.find((i: { kind: string }) => i.kind === 'RENEWAL');
    expect(renewal).toMatchObject({ total: 2500, periodStart: TODAY, dueOn: TODAY });
    await m.ok(principal, PAY, { invoiceId: renewal.id, amount: 2500, method: 'CARD' });
    expect((await m.ok(principal, `query($id: ID!) { member(id: $id) { ${MEMBER_FIELDS} } }`, { id: x.id })).member).toMatchObject({ status: 'ACTIVE', periodStart: TODAY, periodEnd: utcDate(Y, M + 3, D - 1) });
  });

  it('renews a fixed-date category to its next fixed date, a whole period at a time', async () => {
    const principal = principalFor();
    const x = await activeMember(principal, { feeAmount: 0, renewalBasis: 'FIXED', fixedMonth: 1, fixedDay: 1, renewalWindowDays: 366 });
    expect(x.periodEnd).toBe(`${Y}-12-31`);
    expect((await m.ok(principal, RENEW, { id: x.id })).renewMember.periodEnd).toBe(`${Y + 1}-12-31`);
    const lapsed = await activeMember(principal, { feeAmount: 0, renewalBasis: 'FIXED', fixedMonth: 1, fixedDay: 1 }, `${Y - 3}-06-01`);
    expect(lapsed).toMatchObject({ status: 'LAPSED', periodEnd: `${Y - 3}-12-31` });
    expect((await m.ok(principal, RENEW, { id: lapsed.id })).renewMember).toMatchObject({ periodStart: TODAY, periodEnd: `${Y}-12-31` });
  });

  it('refuses to renew a lifetime member with CONFLICT lifetime_membership', async () => {
    const principal = principalFor();
    const x = await activeMember(principal, { feeAmount: 0, period: 'LIFETIME' });
    expect(await m.fails(principal, RENEW, { id: x.id })).toMatchObject({ code: 'CONFLICT', reason: 'lifetime_membership' });
    expect((await m.sql('select period_end from membership.member where id = ?', [x.id]))[0].period_end).toBeNull();
  });
});

describe('members list', () => {
  it('filters by category, join dates and expiry dates', async () => {
    const principal = principalFor();
    const a = await category(principal, { feeAmount: 0 });
    const b = await category(principal, { feeAmount: 0, period: 'MONTHLY' });
    const x = await member(principal, { categoryId: a.id, joinedOn: '2025-03-01' });
    const y = await member(principal, { categoryId: b.id, joinedOn: '2025-06-15' });
    const z = await member(principal, { categoryId: a.id, joinedOn: '2025-09-30' });
    const ids = async (args: Record<string, unknown>) => (await list(principal, args)).data.map((r) => r.id).sort();
    expect(await ids({ categoryId: a.id })).toEqual([x.id, z.id].sort());
    expect(await ids({ joinedFrom: '2025-06-01', joinedTo: '2025-09-30' })).toEqual([y.id, z.id].sort());
    expect(await ids({ expiringFrom: '2025-07-01', expiringTo: '2026-02-28' })).toEqual([y.id, x.id].sort());
    expect(await ids({ categoryId: 'not-a-uuid' })).toEqual([]);
  });

  it('sorts by name and by period end (lifetime last) and pages each order with its cursor', async () => {
    const principal = principalFor();
    const lifetime = await category(principal, { feeAmount: 0, period: 'LIFETIME' });
    const names = ['delta', 'alpha', 'echo', 'charlie', 'bravo'];
    const made: MemberView[] = [];
    for (const [i, name] of names.entries()) made.push(await member(principal, { name, joinedOn: `2025-0${i + 1}-10` }));
    const forever = await member(principal, { name: 'zulu', categoryId: lifetime.id });
    const walk = async (sort: string) => {
      const seen: string[] = [];
      let after: string | null = null;
      do {
        const page = await list(principal, { sort, limit: 2, after });
        seen.push(...page.data.map((r) => r.id));
        after = page.nextCursor;
      } while (after && seen.length < 20);
      return seen;
    };
    const byName = [...made, forever].sort((p, q) => (namesOf(p) < namesOf(q) ? -1 : 1)).map((r) => r.id);
    function namesOf(r: MemberView) {
      return r.id === forever.id ? 'zulu' : names[made.indexOf(r)];
    }
    expect(await walk('NAME_ASC')).toEqual(byName);
    expect(await walk('NAME_DESC')).toEqual([...byName].reverse());
    const byEnd = [...made].sort((p, q) => p.periodEnd!.localeCompare(q.periodEnd!)).map((r) => r.id);
    expect(await walk('PERIOD_END_ASC')).toEqual([...byEnd, forever.id]);
    expect(await walk('PERIOD_END_DESC')).toEqual([forever.id, ...[...byEnd].reverse()]);
    const cursor = (await list(principal, { sort: 'NAME_ASC', limit: 1 })).nextCursor;
    expect(await m.fails(principal, LIST, { sort: 'PERIOD_END_ASC', after: cursor })).toMatchObject({ code: 'BAD_USER_INPUT', reason: 'invalid_cursor' });
  });

  it('refuses a page larger than 100', async () => {
    expect(await m.fails(principalFor(), LIST, { limit: 101 })).toMatchObject({ code: 'BAD_USER_INPUT', param: 'limit' });
  });
});

describe('profile fields', () => {
  it('keeps address and custom fields, and clears them with null', async () => {
    const principal = principalFor();
    const CREATE = `mutation($customFields: JSONObject) {
      createMember(name: "Ada", email: "${uniqueEmail()}", addressLine1: "1 Main St", city: "Springfield", postalCode: "12345", country: "us", customFields: $customFields) {
        id addressLine1 city postalCode country customFields
      }
    }`;
    const created = (await m.ok(principal, CREATE, { customFields: { shirtSize: 'M', volunteer: true, since: 2001 } })).createMember;
    expect(created).toMatchObject({ addressLine1: '1 Main St', city: 'Springfield', country: 'US', customFields: { shirtSize: 'M', volunteer: true, since: 2001 } });
    const updated = (await m.ok(principal, `mutation($id: ID!) { updateMember(id: $id, city: null, customFields: null) { city customFields addressLine1 } }`, { id: created.id })).updateMember;
    expect(updated).toEqual({ city: null, customFields: null, addressLine1: '1 Main St' });
    expect(await m.fails(principal, CREATE, { customFields: { nested: { no: 1 } } })).toMatchObject({ code: 'BAD_USER_INPUT', param: 'customFields' });
  });
});
