import { LockMode, UniqueConstraintViolationException } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Principal } from '../../../core/principal.js';
import { paginate, UUID, type Page } from '../../shared/pagination.js';
import { AuditService } from '../audit/audit.service.js';
import { CategoryPeriod, DEFAULT_RENEWAL_WINDOW_DAYS, RenewalBasis } from './category-period.js';
import { CategoryInUseError, CategoryNameTakenError, CategoryNotFoundError, InvalidCategoryError } from './category.errors.js';
import type { CreateMemberCategoryArgs, MemberCategoriesArgs, UpdateMemberCategoryArgs } from './category.inputs.js';
import { MemberCategory } from './member-category.entity.js';

/** What the audit trail keeps of a category. */
export function categorySnapshot(c: MemberCategory): Record<string, unknown> {
  const { name, feeAmount, currency, period, periodYears, renewalBasis, fixedMonth, fixedDay, graceDays, renewalWindowDays } = c;
  return { name, feeAmount, currency, period, periodYears, renewalBasis, fixedMonth, fixedDay, graceDays, renewalWindowDays };
}

/** Member categories of the principal's account and mode. */
export class CategoryService {
  constructor(
    private readonly em: EntityManager,
    private readonly principal: Principal,
  ) {}

  private get scope() {
    return { accountId: this.principal.accountId, mode: this.principal.mode };
  }

  list(args: MemberCategoriesArgs): Promise<Page<MemberCategory>> {
    return paginate(this.em, MemberCategory, [this.scope], args);
  }

  async find(id: string): Promise<MemberCategory | null> {
    if (!UUID.test(id)) return null;
    return this.em.findOne(MemberCategory, { id, ...this.scope });
  }

  async findMany(ids: readonly string[]): Promise<(MemberCategory | null)[]> {
    const valid = ids.filter((id) => UUID.test(id));
    const rows = valid.length ? await this.em.find(MemberCategory, { id: { $in: valid }, ...this.scope }) : [];
    const byId = new Map(rows.map((c) => [c.id, c]));
    return ids.map((id) => byId.get(id) ?? null);
  }

  /** The category named by `param`, or a 404 naming that parameter. */
  async get(id: string, param = 'id'): Promise<MemberCategory> {
    const category = await this.find(id);
    if (!category) throw new CategoryNotFoundError(id, param);
    return category;
  }

  async create(args: CreateMemberCategoryArgs): Promise<MemberCategory> {
    const basis = args.renewalBasis ?? RenewalBasis.ROLLING;
    if (args.period === CategoryPeriod.EVERY_N_YEARS && args.periodYears == null) {
      throw new InvalidCategoryError('periodYears', 'periodYears is required when period is EVERY_N_YEARS');
    }
    if (args.period !== CategoryPeriod.EVERY_N_YEARS && args.periodYears != null) {
      throw new InvalidCategoryError('periodYears', 'periodYears is only for period EVERY_N_YEARS');
    }
    if (basis === RenewalBasis.FIXED) {
      if (args.period === CategoryPeriod.LIFETIME) {
        throw new InvalidCategoryError('renewalBasis', 'A lifetime category has no renewal date');
      }
      if (args.fixedMonth == null) throw new InvalidCategoryError('fixedMonth', 'fixedMonth is required with renewalBasis FIXED');
      if (args.fixedDay == null) throw new InvalidCategoryError('fixedDay', 'fixedDay is required with renewalBasis FIXED');
    } else if (args.fixedMonth != null || args.fixedDay != null) {
      throw new InvalidCategoryError(args.fixedMonth != null ? 'fixedMonth' : 'fixedDay', 'fixedMonth and fixedDay are only for renewalBasis FIXED');
    }
    const category = this.em.create(MemberCategory, {
      ...this.scope,
      name: args.name.trim(),
      feeAmount: args.feeAmount,
      currency: args.currency.toUpperCase(),
      period: args.period,
      periodYears: args.periodYears ?? null,
      renewalBasis: basis,
      fixedMonth: args.fixedMonth ?? null,
      fixedDay: args.fixedDay ?? null,
      graceDays: args.graceDays ?? 0,
      renewalWindowDays: args.renewalWindowDays ?? DEFAULT_RENEWAL_WINDOW_DAYS,
    });
    new AuditService(this.em, this.principal).record('member_category', category.id, 'member_category.created', null, categorySnapshot(category));
    try {
      await this.em.flush();
    } catch (error) {
      if (error instanceof UniqueConstraintViolationException) throw new CategoryNameTakenError(category.name);
      throw error;
    }
    return category;
  }

  /** Renames a category or changes its fee, currency, grace or renewal window; members keep the periods they have. */
  async update(args: UpdateMemberCategoryArgs): Promise<MemberCategory> {
    const category = await this.get(args.id);
    const before = categorySnapshot(category);
    if (args.name != null) category.name = args.name.trim();
    if (args.feeAmount != null) category.feeAmount = args.feeAmount;
    if (args.currency != null) category.currency = args.currency.toUpperCase();
    if (args.graceDays != null) category.graceDays = args.graceDays;
    if (args.renewalWindowDays != null) category.renewalWindowDays = args.renewalWindowDays;
    new AuditService(this.em, this.principal).record('member_category', category.id, 'member_category.updated', before, categorySnapshot(category));
    try {
      await this.em.flush();
    } catch (error) {
      if (error instanceof UniqueConstraintViolationException) throw new CategoryNameTakenError(category.name);
      throw error;
    }
    return category;
  }

  /** Deletes a category no member (archived ones too) and no invoice names; one in use is kept. */
  async delete(id: string): Promise<{ id: string; deleted: boolean }> {
    return this.em.transactional(async (em) => {
      const category = await em.findOne(MemberCategory, { id: UUID.test(id) ? id : '00000000-0000-0000-0000-000000000000', ...this.scope }, { lockMode: LockMode.PESSIMISTIC_WRITE });
      if (!category) throw new CategoryNotFoundError(id, 'id');
      // The row lock keeps a member from joining it between this check and the delete.
      const [used] = await em.execute<{ used: boolean }[]>(
        `select exists (select 1 from "membership"."member" where "category_id" = ?) or exists (select 1 from "membership"."invoice" where "category_id" = ?) as "used"`,
        [category.id, category.id],
      );
      if (used?.used) throw new CategoryInUseError(category.id);
      new AuditService(em, this.principal).record('member_category', category.id, 'member_category.deleted', categorySnapshot(category), null);
      em.remove(category);
      return { id: category.id, deleted: true };
    });
  }
}
