import { batchedReference } from '../../shared/reference.js';
import { MemberService } from './member.service.js';
import type { MatchingMemberType } from './matching-member.type.js';

/** MatchingMember references: the member's matching profile, scoped like every member read (null when not visible). */
export const matchingMemberReference = batchedReference<MatchingMemberType>('matchingMember.byId', async (ctx, ids) =>
  (await new MemberService(ctx.em, ctx.principal).findMany(ids)).map((member) =>
    member && !member.deletedAt ? { id: member.id, skills: member.skills, headline: member.headline ?? null, location: member.location, member } : null,
  ),
);
