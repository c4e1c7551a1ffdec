import { Field, ObjectType } from '../../shared/type-graphql.js';
import { Member } from './member.entity.js';

/** One page of members, newest first, with the cursor of the next page. */
@ObjectType()
export class MemberPage {
  @Field(() => [Member])
  data!: Member[];

  @Field(() => Boolean)
  hasMore!: boolean;

  @Field(() => String, { nullable: true })
  nextCursor!: string | null;
}
