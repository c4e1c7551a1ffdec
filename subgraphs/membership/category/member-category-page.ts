import { Field, ObjectType } from '../../shared/type-graphql.js';
import { MemberCategory } from './member-category.entity.js';

/** One page of categories, newest first. */
@ObjectType()
export class MemberCategoryPage {
  @Field(() => [MemberCategory])
  data!: MemberCategory[];

  @Field(() => Boolean)
  hasMore!: boolean;

  @Field(() => String, { nullable: true })
  nextCursor!: string | null;
}
