import type { EntityManager } from '@mikro-orm/postgresql';
import type { Principal } from '../../../core/principal.js';
import type { MemberCategory } from '../category/member-category.entity.js';
import type { Period } from './member-period.js';
import type { Member } from './member.entity.js';

/** Why a period is billed: a new member's first period, or a renewal. */
export type BilledPeriodKind = 'membership' | 'renewal';

/** One period of a member to bill, at its category's fee. */
export interface BilledPeriod {
  member: Member;
  category: MemberCategory;
  period: Period;
  kind: BilledPeriodKind;
}

/**
 * What a member's paid periods cost, as the member aggregate asks for it. Finance implements it
 * (an open invoice per period) and the subgraph hands it over in the context, so member/ never
 * imports finance/ while finance/ reads members: the aggregates import each other one way only.
 */
export interface MemberBilling {
  /** Bills the period in `em`'s transaction (it commits or rolls back with the member); answers the invoice's id. */
  billPeriod(em: EntityManager, principal: Principal, bill: BilledPeriod): Promise<string>;
  /** The member's renewal invoice that is not paid yet (open or uncollectible), read in `em`'s transaction; null when there is none. */
  openRenewal(em: EntityManager, principal: Principal, memberId: string): Promise<string | null>;
}

/** The part of the membership context that joining and renewing read. */
export interface MemberBillingContext {
  memberBilling: MemberBilling;
}
