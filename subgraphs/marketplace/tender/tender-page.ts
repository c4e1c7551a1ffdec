import { Field, ObjectType } from '../../shared/type-graphql.js';
import { Tender } from './tender.entity.js';

@ObjectType()
export class TenderPage {
  @Field(() => [Tender])
  data!: Tender[];

  @Field(() => Boolean)
  hasMore!: boolean;

  @Field(() => String, { nullable: true })
  nextCursor!: string | null;
}
