import type { EntityManager } from '@mikro-orm/postgresql';
import type { Mode } from '../../../core/principal.js';

/** A member of the account and mode, as the rule "one person, one active application" needs it. */
export interface CandidateMember {
  id: string;
  /** Lower-cased, as membership stores it. */
  email: string;
}

/**
 * The member an applicant is, if any: the member named by `memberId`, or the member whose email an
 * outside candidate gave (archived members aside). This is the one place the marketplace reads the
 * membership subgraph's rows, read-only and by key: the rule must hold at write time, in the
 * applying transaction, which a federated reference (resolved after the write) cannot give.
 */
export async function candidateMember(
  em: EntityManager,
  scope: { accountId: string; mode: Mode },
  candidate: { memberId: string | null; email: string | null },
): Promise<CandidateMember | null> {
  const [row] = await em.execute<CandidateMember[]>(
    `select "id", "email" from "membership"."member"
      where "account_id" = ? and "mode" = ? and "deleted_at" is null and ("id" = ?::uuid or "email" = ?)
      limit 1`,
    [scope.accountId, scope.mode, candidate.memberId, candidate.email],
  );
  return row ?? null;
}
