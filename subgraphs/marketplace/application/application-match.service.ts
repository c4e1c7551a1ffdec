import type { EntityManager } from '@mikro-orm/postgresql';
import type { Principal } from '../../../core/principal.js';
import { anyTermQuerySql, explainMatch, pgArrayLiteral, type MatchExplanation } from '../../shared/match-score.js';
import { MarketplaceAudit } from '../audit/marketplace-audit.entity.js';
import type { ApplicationTrailEntry } from './application-trail.js';

interface MatchRow {
  id: string;
  required: string[];
  has: string[];
  rank: number;
  location: string | null;
  remote: boolean;
}

/**
 * The match of each application with its posting, for a whole page in one statement. What the
 * marketplace knows of the candidate is the application itself: declared skills, resume text,
 * cover letter and answers; a posting skill counts as had when declared or named in that text.
 */
export class ApplicationMatchService {
  constructor(
    private readonly em: EntityManager,
    private readonly principal: Principal,
  ) {}

  async matches(ids: readonly string[]): Promise<(MatchExplanation | null)[]> {
    const rows = (await this.em.getConnection().execute(APPLICATION_MATCH_SQL, [pgArrayLiteral(ids), this.principal.accountId, this.principal.mode])) as MatchRow[];
    const byId = new Map(rows.map((row) => [row.id, row]));
    return ids.map((id) => {
      const row = byId.get(id);
      if (!row) return null;
      return explainMatch({
        requiredSkills: row.required,
        candidateSkills: row.has,
        textRank: Number(row.rank),
        postingLocation: row.location,
        remote: row.remote,
        candidateLocation: null,
      });
    });
  }

  /** The trail of each application, oldest first, in one statement. */
  async trails(ids: readonly string[]): Promise<ApplicationTrailEntry[][]> {
    const rows = await this.em.find(
      MarketplaceAudit,
      { accountId: this.principal.accountId, mode: this.principal.mode, subjectType: 'job_application', subjectId: { $in: [...ids] } },
      { orderBy: { createdAt: 'asc', id: 'asc' } },
    );
    const byId = new Map<string, ApplicationTrailEntry[]>();
    for (const row of rows) {
      const list = byId.get(row.subjectId) ?? [];
      list.push({ from: row.from ?? null, to: row.to, reason: row.reason ?? null, actor: row.actor, at: row.createdAt });
      byId.set(row.subjectId, list);
    }
    return ids.map((id) => byId.get(id) ?? []);
  }
}

const APPLICATION_TEXT = `coalesce(a."resume_text", '') || ' ' || coalesce(a."cover_letter", '') || ' ' || coalesce((select string_agg(x->>'answer', ' ') from jsonb_array_elements(a."answers"::jsonb) x), '') || ' ' || array_to_string(a."skills", ' ')`;

const APPLICATION_MATCH_SQL = `
select a."id", p."skills" as required, p."location", p."remote",
  array(select s from unnest(p."skills") s where s = any(a."skills") or to_tsvector('english', ${APPLICATION_TEXT}) @@ phraseto_tsquery('english', s)) as has,
  ts_rank(to_tsvector('english', ${APPLICATION_TEXT}), ${anyTermQuerySql(`p."title" || ' ' || array_to_string(p."skills", ' ')`)}) as rank
from "marketplace"."job_application" a
join "marketplace"."job_posting" p on p."id" = a."job_posting_id" and p."account_id" = a."account_id" and p."mode" = a."mode"
where a."id" = any(?::uuid[]) and a."account_id" = ? and a."mode" = ?`;
