import { LockMode, UniqueConstraintViolationException, type FilterQuery } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Principal } from '../../../core/principal.js';
import { NotFoundError } from '../../shared/not-found.error.js';
import { DomainError } from '../../../core/errors.js';
import { UUID, type Page } from '../../shared/pagination.js';
import { AuditService } from '../audit/audit.service.js';
import { CategoryPeriod, DEFAULT_RENEWAL_WINDOW_DAYS, type PeriodRule } from '../category/category-period.js';
import { CategoryService } from '../category/category.service.js';
import type { MemberCategory } from '../category/member-category.entity.js';
import { normalizeSkills } from '../../shared/match-score.js';
import type { MemberBilling } from './member-billing.js';
import { Member } from './member.entity.js';
import { IllegalMemberTransitionError, LifetimeRenewalError, MemberEmailTakenError, RenewalNotDueError, RenewalPendingError } from './member.errors.js';
import type { CreateMemberArgs, MemberProfileArgs, MembersArgs, UpdateMemberArgs } from './member.inputs.js';
import { pageMembers } from './member-list.js';
import { addDays, DEFAULT_PERIOD_RULE, isCalendarDate, periodFrom, type Period } from './member-period.js';
import { MemberSort } from './member-sort.js';
import { DEFAULT_MEMBERSHIP_SETTINGS, type MembershipSettings } from './membership-settings.js';
import { renewalDueCondition } from './renewal-reminders.js';
import { memberWebhookData } from './member-webhook-data.js';
import { enqueueWebhookEvent } from '../webhook/webhook-outbox.js';
import { MemberStatus, memberStatusOf, statusConditions, today, type MemberState } from './member-status.js';
import { escapeLike } from '../../shared/like.js';
import { findForReading } from '../../shared/read-only-rows.js';


/** Explicit lifecycle actions: the statuses each may start from and the state it leaves. */
export const MEMBER_TRANSITIONS = {
  activate: { from: [MemberStatus.PENDING], to: 'current', verb: 'activated' },
  suspend: { from: [MemberStatus.ACTIVE, MemberStatus.GRACE, MemberStatus.LAPSED], to: 'suspended', verb: 'suspended' },
  reinstate: { from: [MemberStatus.SUSPENDED], to: 'current', verb: 'reinstated' },
  cancel: {
    from: [MemberStatus.PENDING, MemberStatus.ACTIVE, MemberStatus.GRACE, MemberStatus.LAPSED, MemberStatus.SUSPENDED],
    to: 'cancelled',
    verb: 'cancelled',
  },
} as const satisfies Record<string, { from: readonly MemberStatus[]; to: MemberState; verb: string }>;

export type MemberAction = keyof typeof MEMBER_TRANSITIONS;

/** Statuses a renewal starts from. */
const RENEWABLE: readonly MemberStatus[] = [MemberStatus.ACTIVE, MemberStatus.GRACE, MemberStatus.LAPSED];

/** What the audit trail keeps of a member. */
export function memberSnapshot(m: Member): Record<string, unknown> {
  return {
    status: m.status,
    state: m.state,
    name: m.name,
    email: m.email,
    categoryId: m.categoryId ?? null,
    periodStart: m.periodStart,
    periodEnd: m.periodEnd,
    graceEndsOn: m.graceEndsOn,
  };
}

function checkCustomFields(fields: Record<string, unknown> | null | undefined): void {
  if (fields == null) return;
  const entries = Object.entries(fields);
  if (entries.length > 50) throw new DomainError('BAD_USER_INPUT', 'customFields may have at most 50 fields', { param: 'customFields', reason: 'invalid_parameter' });
  for (const [key, value] of entries) {
    const ok = value === null || typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value)) || (typeof value === 'string' && value.length <= 1000);
    if (!ok || key.length > 100) {
      throw new DomainError('BAD_USER_INPUT', `customFields.${key} must be a string (up to 1000 characters), number, boolean or null`, {
        param: 'customFields',
        reason: 'invalid_parameter',
      });
    }
  }
}

/**
 * Join dates a member may have. Period arithmetic runs on JavaScript dates, which read years 0–99
 * as 1900–1999 and write years past 9999 in a form PostgreSQL refuses (a 500 after the period of a
 * join date in 9999 was computed); the bounds keep every first period, up to 99 years, well inside.
 */
export const JOINED_ON_RANGE = { from: '1800-01-01', to: '2999-12-31' } as const;

function checkDate(value: string | null | undefined, param: string): void {
  if (value != null && !isCalendarDate(value)) throw new DomainError('BAD_USER_INPUT', `${param} must be a date (YYYY-MM-DD)`, { param, reason: 'invalid_parameter' });
}

/** Members of the principal's account and mode: every query here is scoped to both. */
export class MemberService {
  private readonly audit: AuditService;

  constructor(
    private readonly em: EntityManager,
    private readonly principal: Principal,
  ) {
    this.audit = new AuditService(em, principal);
  }

  private get scope() {
    return { accountId: this.principal.accountId, mode: this.principal.mode, deletedAt: null };
  }

  async list(args: MembersArgs, settings: MembershipSettings = DEFAULT_MEMBERSHIP_SETTINGS): Promise<Page<Member>> {
    const where: FilterQuery<Member>[] = [this.scope];
    if (args.renewalDue != null) {
      const due = renewalDueCondition(today(), settings.renewalReminderDays) as FilterQuery<Member>;
      where.push(args.renewalDue ? due : { $not: due });
    }
    // The same conditions `Member.status` evaluates when a member is read.
    if (args.status) where.push(statusConditions(today())[args.status] as FilterQuery<Member>);
    if (args.categoryId) {
      if (!UUID.test(args.categoryId)) return { data: [], hasMore: false, nextCursor: null };
      where.push({ categoryId: args.categoryId });
    }
    if (args.search) {
      const pattern = `%${escapeLike(args.search)}%`;
      where.push({ $or: [{ name: { $ilike: pattern } }, { email: { $ilike: pattern } }] });
    }
    for (const [param, value] of Object.entries({ joinedFrom: args.joinedFrom, joinedTo: args.joinedTo, expiringFrom: args.expiringFrom, expiringTo: args.expiringTo })) {
      checkDate(value, param);
    }
    if (args.joinedFrom) where.push({ joinedOn: { $gte: args.joinedFrom } });
    if (args.joinedTo) where.push({ joinedOn: { $lte: args.joinedTo } });
    if (args.expiringFrom) where.push({ periodEnd: { $gte: args.expiringFrom } });
    if (args.expiringTo) where.push({ periodEnd: { $lte: args.expiringTo } });
    return pageMembers(this.em, where, args.sort ?? MemberSort.CREATED_AT_DESC, args);
  }

  /** One member, or null when it does not exist in this account and mode. */
  async find(id: string): Promise<Member | null> {
    if (!UUID.test(id)) return null;
    return this.em.findOne(Member, { id, ...this.scope });
  }

  /**
   * One member for a read-only answer (the `member` query): the row skips the unit of work
   * (findForReading), which for one row was about 250 µs of `em.findOne` over its statement.
   * Never modify what it returns; `find` loads a member that is to be changed.
   */
  async read(id: string): Promise<Member | null> {
    if (!UUID.test(id)) return null;
    const [member] = await findForReading(this.em, Member, { id, ...this.scope }, { limit: 1 });
    return member ?? null;
  }

  /**
   * Many members in one statement, in the order of `ids` (null where not visible). Archived
   * members are included: what they did (a job posted, an invoice paid) still names them.
   */
  async findMany(ids: readonly string[]): Promise<(Member | null)[]> {
    const valid = ids.filter((id) => UUID.test(id));
    const { deletedAt: _archivedToo, ...scope } = this.scope;
    const rows = valid.length ? await this.em.find(Member, { id: { $in: valid }, ...scope }) : [];
    const byId = new Map(rows.map((m) => [m.id, m]));
    return ids.map((id) => byId.get(id) ?? null);
  }

  async get(id: string): Promise<Member> {
    const member = await this.find(id);
    if (!member) throw new NotFoundError('member', id);
    return member;
  }

  /**
   * Creates a member with its first period from the join date. A member of a category with a
   * fee starts PENDING with an open invoice for that period; paying it (or `activate`) makes
   * the member current. Free members start current. `billing` makes the invoice.
   */
  async create(args: CreateMemberArgs, billing: MemberBilling): Promise<Member> {
    const joinedOn = args.joinedOn ?? today();
    checkDate(joinedOn, 'joinedOn');
    if (joinedOn < JOINED_ON_RANGE.from || joinedOn > JOINED_ON_RANGE.to) {
      throw new DomainError('BAD_USER_INPUT', `joinedOn must lie between ${JOINED_ON_RANGE.from} and ${JOINED_ON_RANGE.to}`, { param: 'joinedOn', reason: 'invalid_parameter' });
    }
    checkCustomFields(args.customFields);
    const email = args.email.trim().toLowerCase();
    try {
      return await this.em.transactional(async (em) => {
        const category = args.categoryId ? await new CategoryService(em, this.principal).get(args.categoryId, 'categoryId') : null;
        const paying = category !== null && category.feeAmount > 0;
        const period = periodFrom(ruleOf(category), joinedOn);
        const member = em.create(Member, {
          accountId: this.principal.accountId,
          mode: this.principal.mode,
          name: args.name.trim(),
          email,
          ...profileOf(args),
          categoryId: category?.id ?? null,
          state: paying ? 'pending' : 'current',
          joinedOn,
          ...withGrace(period, category),
        });
        const service = new MemberService(em, this.principal);
        service.audit.record('member', member.id, 'member.created', null, memberSnapshot(member));
        if (paying) await billing.billPeriod(em, this.principal, { member, category, period, kind: 'membership' });
        await enqueueWebhookEvent(em, this.principal, 'member.created', { member: memberWebhookData(member) });
        return member;
      });
    } catch (error) {
      if (error instanceof UniqueConstraintViolationException) throw new MemberEmailTakenError(email);
      throw error;
    }
  }

  async update(args: UpdateMemberArgs): Promise<Member> {
    checkCustomFields(args.customFields);
    const member = await this.get(args.id);
    const before = memberSnapshot(member);
    if (args.name != null) member.name = args.name.trim();
    if (args.email != null) member.email = args.email.trim().toLowerCase();
    Object.assign(member, profileOf(args, true));
    if (args.categoryId !== undefined && args.categoryId !== member.categoryId) {
      const category = args.categoryId ? await new CategoryService(this.em, this.principal).get(args.categoryId, 'categoryId') : null;
      if ((category?.period === CategoryPeriod.LIFETIME) !== (member.periodEnd === null)) {
        throw new DomainError('CONFLICT', 'A member moves between lifetime and periodic categories only by a new membership', {
          param: 'categoryId',
          reason: 'category_change_not_allowed',
        });
      }
      member.categoryId = category?.id ?? null;
      member.graceEndsOn = member.periodEnd === null ? null : addDays(member.periodEnd, category?.graceDays ?? 0);
    }
    this.audit.record('member', member.id, 'member.updated', before, memberSnapshot(member));
    try {
      await this.em.flush();
    } catch (error) {
      if (error instanceof UniqueConstraintViolationException) throw new MemberEmailTakenError(member.email);
      throw error;
    }
    return member;
  }

  /** Archives the member: it leaves lists and lookups, and its email can be used again. */
  async archive(id: string): Promise<{ id: string; deleted: boolean }> {
    const member = await this.get(id);
    const before = memberSnapshot(member);
    member.deletedAt = new Date();
    this.audit.record('member', member.id, 'member.archived', before, { ...memberSnapshot(member), archived: true });
    await this.em.flush();
    return { id: member.id, deleted: true };
  }

  /** Runs a lifecycle action on the locked member, or 409 illegal_transition. */
  async transition(id: string, action: MemberAction): Promise<Member> {
    return this.em.transactional(async (em) => {
      const service = new MemberService(em, this.principal);
      const member = await service.lock(id);
      service.apply(member, action);
      return member;
    });
  }

  /** Activates the pending member whose first invoice was just paid, in the caller's transaction. */
  async activateOnPayment(memberId: string): Promise<void> {
    const member = await this.lockAny(memberId);
    if (member?.status === MemberStatus.PENDING) this.apply(member, 'activate');
  }

  /**
   * Renews for one more period of the category: from the current end while ACTIVE or GRACE, from
   * today once LAPSED; a FIXED category's period ends before its fixed date. An ACTIVE member
   * renews only within the category's renewal window before its period ends (409
   * renewal_not_due), and while a renewal invoice is owed no second one is opened (409
   * renewal_pending). With a fee, `billing` opens the renewal invoice and the period is added
   * when it is paid (`applyPaidRenewal`); a free renewal adds it at once. The row lock orders
   * concurrent renewals, so each sees the invoice the one before it opened.
   */
  async renew(id: string, billing: MemberBilling): Promise<Member> {
    return this.em.transactional(async (em) => {
      const service = new MemberService(em, this.principal);
      const member = await service.lock(id);
      if (member.periodEnd === null) throw new LifetimeRenewalError();
      const status = member.status;
      if (!RENEWABLE.includes(status)) throw new IllegalMemberTransitionError('renewed', status);
      const pending = await billing.openRenewal(em, this.principal, member.id);
      if (pending) throw new RenewalPendingError(pending);
      const category = member.categoryId ? await new CategoryService(em, this.principal).get(member.categoryId, 'categoryId') : null;
      if (status === MemberStatus.ACTIVE) {
        const opensOn = addDays(member.periodEnd, -(category?.renewalWindowDays ?? DEFAULT_RENEWAL_WINDOW_DAYS));
        if (today() < opensOn) throw new RenewalNotDueError(opensOn, member.periodEnd);
      }
      const added: Period =
        status === MemberStatus.LAPSED ? periodFrom(ruleOf(category), today()) : periodFrom(ruleOf(category), addDays(member.periodEnd, 1));
      if (category && category.feeAmount > 0) {
        const invoiceId = await billing.billPeriod(em, this.principal, { member, category, period: added, kind: 'renewal' });
        const snapshot = memberSnapshot(member);
        service.audit.record('member', member.id, 'member.renewal_invoiced', snapshot, { ...snapshot, invoiceId, renewalPeriod: added });
        return member;
      }
      await service.extend(member, { periodStart: status === MemberStatus.LAPSED ? added.periodStart : member.periodStart, periodEnd: added.periodEnd }, category, null);
      return member;
    });
  }

  /**
   * Adds the period a renewal invoice paid for, in the caller's transaction (which locked the
   * invoice), and answers the period it replaced (null when nothing changed). A period the member
   * holds already adds nothing; one that starts after a gap (the member had lapsed) starts the
   * member's period anew.
   */
  async applyPaidRenewal(memberId: string, period: Period, invoiceId: string): Promise<Period | null> {
    const member = await this.lockAny(memberId);
    if (!member || member.periodEnd === null || period.periodEnd === null || period.periodEnd <= member.periodEnd) return null;
    const replaced = { periodStart: member.periodStart, periodEnd: member.periodEnd };
    const category = member.categoryId ? await new CategoryService(this.em, this.principal).find(member.categoryId) : null;
    const start = period.periodStart > addDays(member.periodEnd, 1) ? period.periodStart : member.periodStart;
    await this.extend(member, { periodStart: start, periodEnd: period.periodEnd }, category, invoiceId);
    return replaced;
  }

  /**
   * Takes back the period of a renewal whose invoice is no longer paid (a refund reopened it):
   * the member returns to `replaced`, the period the renewal had replaced, and its status follows
   * from those dates. Only while that renewal's period is still the member's last: a later one
   * added since stays.
   */
  async revokeRenewal(memberId: string, period: Period, replaced: Period, invoiceId: string): Promise<void> {
    const member = await this.lockAny(memberId);
    if (!member || member.periodEnd === null || member.periodEnd !== period.periodEnd) return;
    const category = member.categoryId ? await new CategoryService(this.em, this.principal).find(member.categoryId) : null;
    const before = memberSnapshot(member);
    Object.assign(member, withGrace(replaced, category));
    this.audit.record('member', member.id, 'member.renewal_revoked', before, { ...memberSnapshot(member), invoiceId });
  }

  /** Returns a current member to PENDING after a refund reopened its first invoice, in the caller's transaction. */
  async deactivateOnRefund(memberId: string, invoiceId: string): Promise<void> {
    const member = await this.lockAny(memberId);
    if (member?.state !== 'current') return;
    const before = memberSnapshot(member);
    member.state = 'pending';
    this.audit.record('member', member.id, 'member.deactivated', before, { ...memberSnapshot(member), invoiceId });
  }

  /** Sets the member's period (and grace from it), records the renewal and tells `member.renewed` endpoints. */
  private async extend(member: Member, period: Period, category: MemberCategory | null, invoiceId: string | null): Promise<void> {
    const before = memberSnapshot(member);
    Object.assign(member, withGrace(period, category));
    this.audit.record('member', member.id, 'member.renewed', before, { ...memberSnapshot(member), invoiceId });
    await enqueueWebhookEvent(this.em, this.principal, 'member.renewed', { member: memberWebhookData(member), invoiceId });
  }

  /** A member of this account and mode, archived ones too (their invoices are still paid), locked; null when absent. */
  private async lockAny(id: string): Promise<Member | null> {
    const { deletedAt: _archivedToo, ...scope } = this.scope;
    return this.em.findOne(Member, { id, ...scope }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
  }

  private async lock(id: string): Promise<Member> {
    if (!UUID.test(id)) throw new NotFoundError('member', id);
    const member = await this.em.findOne(Member, { id, ...this.scope }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
    if (!member) throw new NotFoundError('member', id);
    return member;
  }

  private apply(member: Member, action: MemberAction): void {
    const rule = MEMBER_TRANSITIONS[action];
    const status = memberStatusOf(member);
    if (!(rule.from as readonly MemberStatus[]).includes(status)) throw new IllegalMemberTransitionError(rule.verb, status);
    const before = memberSnapshot(member);
    member.state = rule.to;
    this.audit.record('member', member.id, `member.${rule.verb}`, before, memberSnapshot(member));
  }
}

function ruleOf(category: MemberCategory | null): PeriodRule {
  return category?.periodRule ?? DEFAULT_PERIOD_RULE;
}

function withGrace(period: Period, category: MemberCategory | null): Period & { graceEndsOn: string | null } {
  return { ...period, graceEndsOn: period.periodEnd === null ? null : addDays(period.periodEnd, category?.graceDays ?? 0) };
}

/** The profile fields given; with `partial`, only those present (null clears). */
function profileOf(args: MemberProfileArgs, partial = false): Partial<Member> {
  const keys = ['phone', 'addressLine1', 'addressLine2', 'city', 'region', 'postalCode', 'country', 'customFields', 'headline'] as const;
  const profile: Record<string, unknown> = {};
  for (const key of keys) {
    const value = args[key];
    if (partial && value === undefined) continue;
    profile[key] = key === 'country' && typeof value === 'string' ? value.toUpperCase() : (value ?? null);
  }
  // Skills are never null: an absent list on create and a null on update both mean none.
  if (!partial || args.skills !== undefined) profile.skills = normalizeSkills(args.skills);
  return profile as Partial<Member>;
}
