import { registerEnumType } from '../../shared/type-graphql.js';

/**
 * Where a member stands. PENDING, SUSPENDED and CANCELLED are stored states; a member in the
 * stored state `current` is ACTIVE, GRACE or LAPSED by its period dates (see STATUS_CONDITIONS).
 */
export enum MemberStatus {
  PENDING = 'pending',
  ACTIVE = 'active',
  GRACE = 'grace',
  LAPSED = 'lapsed',
  SUSPENDED = 'suspended',
  CANCELLED = 'cancelled',
}

registerEnumType(MemberStatus, {
  name: 'MemberStatus',
  valuesConfig: {
    PENDING: { description: 'Joined; the first invoice is not paid yet (or activation is awaited).' },
    ACTIVE: { description: 'Within the paid period (lifetime members always).' },
    GRACE: { description: "Past the period end, within the category's grace days." },
    LAPSED: { description: 'Past the period end and the grace days.' },
    SUSPENDED: { description: 'Suspended by the organisation until reinstated.' },
    CANCELLED: { description: 'Cancelled; final.' },
  },
});

/** What is stored; ACTIVE, GRACE and LAPSED are all `current`, told apart by the dates. */
export type MemberState = 'pending' | 'current' | 'suspended' | 'cancelled';

const DAY_MS = 86_400_000;
/** The last day printed and the instants it covers: every member's status asks for today. */
let printedDay = { from: 0, until: 0, day: '' };

/** Today's calendar date in UTC, as YYYY-MM-DD. */
export function today(now?: Date): string {
  const ms = now ? now.getTime() : Date.now();
  if (ms < printedDay.from || ms >= printedDay.until) {
    const from = ms - (((ms % DAY_MS) + DAY_MS) % DAY_MS);
    printedDay = { from, until: from + DAY_MS, day: new Date(from).toISOString().slice(0, 10) };
  }
  return printedDay.day;
}

type Comparison = { $lt?: string; $gte?: string };
type Condition = { state?: MemberState; periodEnd?: Comparison | null; graceEndsOn?: Comparison; $or?: Condition[] };

/**
 * The one definition of every status, as a filter on stored columns. The list filter sends it
 * to SQL as it is; `memberStatusOf` evaluates the same conditions on a loaded member, with SQL's
 * rules (a comparison with null is false), so a read and a filter cannot disagree.
 */
export function statusConditions(on: string): Record<MemberStatus, Condition> {
  return {
    [MemberStatus.PENDING]: { state: 'pending' },
    [MemberStatus.ACTIVE]: { state: 'current', $or: [{ periodEnd: null }, { periodEnd: { $gte: on } }] },
    [MemberStatus.GRACE]: { state: 'current', periodEnd: { $lt: on }, graceEndsOn: { $gte: on } },
    [MemberStatus.LAPSED]: { state: 'current', graceEndsOn: { $lt: on } },
    [MemberStatus.SUSPENDED]: { state: 'suspended' },
    [MemberStatus.CANCELLED]: { state: 'cancelled' },
  };
}

interface StatusColumns {
  state: MemberState;
  periodEnd?: string | null;
  graceEndsOn?: string | null;
}

function holds(row: StatusColumns, condition: Condition): boolean {
  for (const [key, expected] of Object.entries(condition)) {
    if (key === '$or') {
      if (!(expected as Condition[]).some((c) => holds(row, c))) return false;
      continue;
    }
    const actual = (row as unknown as Record<string, string | null | undefined>)[key] ?? null;
    if (expected === null) {
      if (actual !== null) return false;
    } else if (typeof expected === 'object') {
      const { $lt, $gte } = expected as Comparison;
      if (actual === null) return false;
      if ($lt !== undefined && !(actual < $lt)) return false;
      if ($gte !== undefined && !(actual >= $gte)) return false;
    } else if (actual !== expected) {
      return false;
    }
  }
  return true;
}

/** The conditions of the last day asked for: a page of members asks for the same day each row. Only read, never handed to SQL. */
let lastDay: { on: string; conditions: Record<MemberStatus, Condition> } | undefined;
const STATUSES = Object.values(MemberStatus);

/** The member's status on `on` (today by default), by the conditions the list filter uses. */
export function memberStatusOf(row: StatusColumns, on: string = today()): MemberStatus {
  if (lastDay?.on !== on) lastDay = { on, conditions: statusConditions(on) };
  const { conditions } = lastDay;
  for (const status of STATUSES) if (holds(row, conditions[status])) return status;
  // Unreachable while grace_ends_on >= period_end, which every write keeps.
  return MemberStatus.LAPSED;
}
