import { createUnionType } from '../../shared/type-graphql.js';
import { MatchingJobType } from './matching-job.type.js';
import { MatchingMemberType } from './matching-member.type.js';

/**
 * What `jobMatches` answers: the member (whose `jobMatches` the marketplace ranks, with its
 * profile fetched from membership by @requires) or the posting (whose `candidateMatches`
 * membership ranks, with the posting's fields fetched from here by @requires). A union rather
 * than an object holding both keeps the REST view one level shallower.
 */
export const JobMatchSubject = createUnionType({
  name: 'JobMatchSubject',
  description: 'A member (ranked list: jobMatches) or a job posting (ranked list: candidateMatches).',
  types: () => [MatchingMemberType, MatchingJobType] as const,
  resolveType: (value) => ('title' in value ? MatchingJobType : MatchingMemberType),
});
