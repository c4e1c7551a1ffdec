import DataLoader from 'dataloader';
import { loaderFor, type SubgraphContext } from '../../shared/context.js';
import { DomainError } from '../../../core/errors.js';
import { MemberService } from './member.service.js';
import type { MatchingMemberType } from './matching-member.type.js';

/**
 * MatchingMember references, one statement per request. A member the caller may not see (another
 * account's or mode's, or archived) is an error, not null: it is what `jobMatches(memberId:)`
 * answers, and a ranking for nobody is a 404.
 */
export const matchingMemberReference = {
  __resolveReference(reference: { id: string; page: string }, ctx: SubgraphContext): Promise<MatchingMemberType> {
    const loader = loaderFor(
      ctx,
      'matchingMember.byId',
      () =>
        new DataLoader<string, Omit<MatchingMemberType, 'page'>>(async (ids) =>
          (await new MemberService(ctx.em, ctx.principal).findMany(ids)).map((member, i) =>
            member && !member.deletedAt
              ? { id: member.id, skills: member.skills, headline: member.headline ?? null, location: member.location, member }
              : new DomainError('NOT_FOUND', `No member with id "${ids[i]}"`, { param: 'memberId', reason: 'member_not_found' }),
          ),
        ),
    );
    return loader.load(reference.id).then((profile) => ({ ...profile, page: reference.page }));
  },
};
