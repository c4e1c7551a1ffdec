import { LockMode, UniqueConstraintViolationException, type FilterQuery } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Principal } from '../../shared/principal.js';
import { NotFoundError } from '../../shared/not-found.error.js';
import { DomainError } from '../../shared/errors.js';
import { Member } from './member.entity.js';
import { MemberEmailTakenError } from './member.errors.js';
import { paginate, UUID, type Page } from '../../shared/pagination.js';
import type { CreateMemberArgs, MembersArgs, UpdateMemberArgs } from './member.inputs.js';
import { MemberStatus, today } from './member-status.js';
import { isCalendarDate, nextYearlyPeriodEnd, yearlyPeriodFrom } from './member-period.js';

function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/** Members of the principal's account and mode: every query here is scoped to both. */
export class MemberService {
  constructor(
    private readonly em: EntityManager,
    private readonly principal: Principal,
  ) {}

  private get scope() {
    return { accountId: this.principal.accountId, mode: this.principal.mode, deletedAt: null };
  }

  async list(args: MembersArgs): Promise<Page<Member>> {
    const where: FilterQuery<Member>[] = [this.scope];
    if (args.status === MemberStatus.ACTIVE) where.push({ periodEnd: { $gte: today() } });
    if (args.status === MemberStatus.LAPSED) where.push({ periodEnd: { $lt: today() } });
    if (args.search) {
      const pattern = `%${escapeLike(args.search)}%`;
      where.push({ $or: [{ name: { $ilike: pattern } }, { email: { $ilike: pattern } }] });
    }
    return paginate(this.em, Member, where, args);
  }

  /** One member, or null when it does not exist in this account and mode. */
  async find(id: string): Promise<Member | null> {
    if (!UUID.test(id)) return null;
    return this.em.findOne(Member, { id, ...this.scope });
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

  async create(args: CreateMemberArgs): Promise<Member> {
    const joinedOn = args.joinedOn ?? today();
    if (!isCalendarDate(joinedOn)) {
      throw new DomainError('BAD_USER_INPUT', 'joinedOn must be a date (YYYY-MM-DD)', { param: 'joinedOn' });
    }
    const member = this.em.create(Member, {
      accountId: this.principal.accountId,
      mode: this.principal.mode,
      name: args.name.trim(),
      email: args.email.trim().toLowerCase(),
      phone: args.phone ?? null,
      joinedOn,
      ...yearlyPeriodFrom(joinedOn),
    });
    await this.flushUnique(member.email);
    return member;
  }

  async update(args: UpdateMemberArgs): Promise<Member> {
    const member = await this.get(args.id);
    if (args.name != null) member.name = args.name.trim();
    if (args.email != null) member.email = args.email.trim().toLowerCase();
    if (args.phone !== undefined) member.phone = args.phone;
    await this.flushUnique(member.email);
    return member;
  }

  /** Archives the member: it leaves lists and lookups, and its email can be used again. */
  async archive(id: string): Promise<{ id: string; deleted: boolean }> {
    const member = await this.get(id);
    member.deletedAt = new Date();
    await this.em.flush();
    return { id: member.id, deleted: true };
  }

  /**
   * Extends the membership by one period: from the current end while the member is active,
   * from today once it has lapsed. The row is locked so concurrent renewals each count.
   */
  async renew(id: string): Promise<Member> {
    if (!UUID.test(id)) throw new NotFoundError('member', id);
    return this.em.transactional(async (em) => {
      const member = await em.findOne(Member, { id, ...this.scope }, { lockMode: LockMode.PESSIMISTIC_WRITE });
      if (!member) throw new NotFoundError('member', id);
      const now = today();
      if (member.periodEnd >= now) {
        // Renewing early adds a year to the paid-through date; the current period goes on.
        member.periodEnd = nextYearlyPeriodEnd(member.periodEnd);
      } else {
        Object.assign(member, yearlyPeriodFrom(now));
      }
      return member;
    });
  }

  private async flushUnique(email: string): Promise<void> {
    try {
      await this.em.flush();
    } catch (error) {
      if (error instanceof UniqueConstraintViolationException) throw new MemberEmailTakenError(email);
      throw error;
    }
  }
}
