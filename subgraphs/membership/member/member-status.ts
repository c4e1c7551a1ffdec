import { registerEnumType } from '../../shared/type-graphql.js';

/** Where a member stands. Active and lapsed follow from the period; later states join them. */
export enum MemberStatus {
  ACTIVE = 'active',
  LAPSED = 'lapsed',
}

registerEnumType(MemberStatus, { name: 'MemberStatus' });

/** Today's calendar date in UTC, as YYYY-MM-DD. */
export function today(now = new Date()): string {
  return now.toISOString().slice(0, 10);
}

/** A member is active through the last day of its period, lapsed from the day after. */
export function memberStatusOn(periodEnd: string, on: string = today()): MemberStatus {
  return periodEnd >= on ? MemberStatus.ACTIVE : MemberStatus.LAPSED;
}
