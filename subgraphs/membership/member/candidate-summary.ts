import { Field, ID, ObjectType } from '../../shared/type-graphql.js';
import type { Member } from './member.entity.js';

/**
 * What a ranked member shows at a glance. The REST view of a match shows this rather than the
 * whole member: the answer stays within the edge's depth and cost limits.
 */
@ObjectType({ description: 'A member at a glance, as a match shows it.' })
export class CandidateSummary {
  @Field(() => ID)
  id!: string;

  @Field(() => String)
  name!: string;

  @Field(() => String)
  email!: string;

  @Field(() => String, { nullable: true })
  headline!: string | null;

  @Field(() => [String])
  skills!: string[];

  @Field(() => String, { nullable: true })
  location!: string | null;
}

/** The summary of a member. */
export function candidateSummaryOf(member: Member): CandidateSummary {
  return { id: member.id, name: member.name, email: member.email, headline: member.headline ?? null, skills: member.skills, location: member.location };
}
