import type { EntityManager } from '@mikro-orm/postgresql';
import type { Principal } from '../../../core/principal.js';
import { anyTermQuerySql, baseScoreSql, explainMatch, pgArrayLiteral, locationFitSql, normalizeSkills, prunedRankingSql } from '../../shared/match-score.js';
import { rankedPage, rankWindow } from '../../shared/match.types.js';
import { JobPosting } from '../job/job-posting.entity.js';
import { summaryOf } from './job-posting-summary.js';
import type { MatchingMemberType } from './matching-member.type.js';
import type { PostingMatchPage } from './posting-match.types.js';

interface RankedRow {
  id: string;
  rank: number;
  score: number;
}

/**
 * Open postings ranked for a member whose skills, headline and location came by federation
 * (@requires). One statement: only open postings (closing date not passed) sharing a skill or a
 * word with the member are considered (both indexed), ordered by the shared score formula. The
 * text part ranks the member's profile against the posting's title and skills, as membership does.
 */
export class PostingMatchService {
  constructor(
    private readonly em: EntityManager,
    private readonly principal: Principal,
  ) {}

  async rank(member: MatchingMemberType, args: { limit?: number | null; after?: string | null }): Promise<PostingMatchPage> {
    const window = rankWindow(args);
    const { limit, offset } = window;
    const offered = normalizeSkills(member.skills);
    const rows = (await this.em.getConnection().execute(POSTING_RANKING_SQL, [
      pgArrayLiteral(offered),
      `${member.headline ?? ''} ${offered.join(' ')}`,
      `${member.headline ?? ''} ${offered.join(' ')}`,
      member.location ?? null,
      this.principal.accountId,
      this.principal.mode,
      limit + 1 + offset,
      limit + 1,
      offset,
    ])) as RankedRow[];
    const page = rows.slice(0, limit);
    const postings = page.length ? await this.em.find(JobPosting, { id: { $in: page.map((row) => row.id) }, accountId: this.principal.accountId, mode: this.principal.mode }) : [];
    const byId = new Map(postings.map((posting) => [posting.id, posting]));
    const data = page.flatMap((row) => {
      const posting = byId.get(row.id);
      if (!posting) return [];
      const explanation = explainMatch({
        requiredSkills: posting.skills,
        candidateSkills: offered,
        textRank: Number(row.rank),
        postingLocation: posting.location,
        remote: posting.remote,
        candidateLocation: member.location,
      });
      return [{ posting, job: summaryOf(posting), ...explanation }];
    });
    return rankedPage(data, rows.length, window);
  }
}

/** Open postings of one account and mode ranked for a member; parameters in the order `rank` passes them. */
export const POSTING_RANKING_SQL = `
with q as (
  select ?::text[] as offered, ?::text as profile, ${anyTermQuerySql('?::text')} as query, ?::text as location
), cheap as (
  select p."id", p."title", p."skills",
    ${baseScoreSql({ required: 'p."skills"', offered: 'q.offered', fit: locationFitSql({ posting: 'p."location"', remote: 'p."remote"', candidate: 'q.location' }) })} as base
  from "marketplace"."job_posting" p, q
  where p."account_id" = ? and p."mode" = ? and p."state" = 'open' and (p."closes_at" is null or p."closes_at" > now())
    and (p."skills" && q.offered or to_tsvector('english', p."title" || ' ' || p."description") @@ q.query)
), ${prunedRankingSql(
  // The member's profile ranked against the posting's title and skills: the same pair membership
  // ranks for candidateMatches, so a match scores the same in both directions.
  `ts_rank(to_tsvector('english', q.profile), ${anyTermQuerySql(`cheap."title" || ' ' || array_to_string(cheap."skills", ' ')`)})`,
)}`;
