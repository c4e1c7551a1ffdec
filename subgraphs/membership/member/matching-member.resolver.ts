import { FieldResolver, Resolver, Root } from '../../shared/type-graphql.js';
import { Member } from './member.entity.js';
import { MatchingMemberType } from './matching-member.type.js';

/** Member.matchingProfile: the member as job matching sees it, where the marketplace adds jobMatches. */
@Resolver(() => Member)
export class MatchingMemberResolver {
  @FieldResolver(() => MatchingMemberType, { description: 'The member as job matching sees it; its jobMatches ranks open postings for the member.' })
  matchingProfile(@Root() member: Member): MatchingMemberType {
    return { id: member.id, skills: member.skills, headline: member.headline ?? null, location: member.location, member };
  }
}
