import { registerEnumType } from '../../shared/type-graphql.js';

/** A posting's lifecycle; `open` with a past closing date reads as `closed`. */
export enum JobPostingStatus {
  DRAFT = 'draft',
  OPEN = 'open',
  CLOSED = 'closed',
  FILLED = 'filled',
}

registerEnumType(JobPostingStatus, {
  name: 'JobPostingStatus',
  description: 'draft (not visible to candidates), open (takes applications), closed, filled.',
});

export enum EmploymentType {
  FULL_TIME = 'full_time',
  PART_TIME = 'part_time',
  CONTRACT = 'contract',
  TEMPORARY = 'temporary',
  INTERNSHIP = 'internship',
  VOLUNTEER = 'volunteer',
}

registerEnumType(EmploymentType, { name: 'EmploymentType' });

/**
 * The status as of `now`: the stored state, except that an open posting whose closing date has
 * passed is closed. Reads and writes both go through this (or its SQL twin), so no timer is needed.
 */
export function effectiveStatus(state: JobPostingStatus, closesAt: Date | null | undefined, now = new Date()): JobPostingStatus {
  return state === JobPostingStatus.OPEN && closesAt && closesAt.getTime() <= now.getTime() ? JobPostingStatus.CLOSED : state;
}

/** `effectiveStatus` in SQL, for a posting table aliased `alias`. */
export function effectiveStatusSql(alias: string): string {
  return `(case when ${alias}."state" = 'open' and ${alias}."closes_at" <= now() then 'closed' else ${alias}."state" end)`;
}
