import type { EntityManager } from '@mikro-orm/postgresql';
import type { Principal } from '../../../core/principal.js';
import { anyTermQuerySql, baseScoreSql, explainMatch, pgArrayLiteral, locationFitSql, normalizeSkills, prunedRankingSql } from '../../shared/match-score.js';
import { rankedPage, rankWindow } from '../../shared/match.types.js';
import { Member } from './member.entity.js';
import { candidateSummaryOf } from './candidate-summary.js';
import type { CandidateMatchPage } from './candidate-match.types.js';
import type { MatchingJobType } from './matching-job.type.js';

interface RankedRow {
  id: string;
  rank: number;
  score: number;
}

/**
 * Members ranked for a job posting whose fields came by federation (@requires). The ranking is
 * one statement over this account's members: only those sharing a skill or a word with the
 * posting are considered (both indexed), ordered by the shared score formula.
 */
export class CandidateMatchService {
  constructor(
    private readonly em: EntityManager,
    private readonly principal: Principal,
  ) {}

  async rank(posting: MatchingJobType, args: { limit?: number | null; after?: string | null }): Promise<CandidateMatchPage> {
    const window = rankWindow(args);
    const { limit, offset } = window;
    const required = normalizeSkills(posting.skills);
    const rows = (await this.em.getConnection().execute(CANDIDATE_RANKING_SQL, [
      pgArrayLiteral(required),
      `${posting.title ?? ''} ${required.join(' ')}`,
      posting.location ?? null,
      posting.remote ?? false,
      this.principal.accountId,
      this.principal.mode,
      limit + 1 + offset,
      limit + 1,
      offset,
    ])) as RankedRow[];
    const page = rows.slice(0, limit);
    const members = page.length ? await this.em.find(Member, { id: { $in: page.map((row) => row.id) }, accountId: this.principal.accountId, mode: this.principal.mode }) : [];
    const byId = new Map(members.map((member) => [member.id, member]));
    const data = page.flatMap((row) => {
      const member = byId.get(row.id);
      if (!member) return [];
      const explanation = explainMatch({
        requiredSkills: required,
        candidateSkills: member.skills,
        textRank: Number(row.rank),
        postingLocation: posting.location,
        remote: posting.remote ?? false,
        candidateLocation: member.location,
      });
      return [{ member, candidate: candidateSummaryOf(member), job: { id: posting.id, page: posting.page }, ...explanation }];
    });
    return rankedPage(data, rows.length, window);
  }
}

const MEMBER_LOCATION = `nullif(concat_ws(', ', m."city", m."region", m."country"), '')`;

/**
 * Members of one account and mode ranked for a posting; parameters in the order `rank` passes
 * them. The text part ranks the member's headline and skills against the posting's title and
 * skills, as the marketplace does in the other direction.
 */
export const CANDIDATE_RANKING_SQL = `
with q as (
  select ?::text[] as required, ${anyTermQuerySql('?::text')} as query, ?::text as location, ?::boolean as remote
), cheap as (
  select m."id", m."headline", m."skills",
    ${baseScoreSql({ required: 'q.required', offered: 'm."skills"', fit: locationFitSql({ posting: 'q.location', remote: 'q.remote', candidate: MEMBER_LOCATION }) })} as base
  from "membership"."member" m, q
  where m."account_id" = ? and m."mode" = ? and m."deleted_at" is null
    and (m."skills" && q.required or to_tsvector('english', coalesce(m."headline", '')) @@ q.query)
), ${prunedRankingSql(`ts_rank(to_tsvector('english', coalesce(cheap."headline", '') || ' ' || array_to_string(cheap."skills", ' ')), q.query)`)}`;
