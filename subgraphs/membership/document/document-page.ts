import { Field, ObjectType } from '../../shared/type-graphql.js';
import { Document } from './document.entity.js';

/** One page of documents (newest first, or by rank with `q`), with the cursor of the next page. */
@ObjectType()
export class DocumentPage {
  @Field(() => [Document])
  data!: Document[];

  @Field(() => Boolean)
  hasMore!: boolean;

  @Field(() => String, { nullable: true })
  nextCursor!: string | null;
}
