import { Field, ObjectType } from '../../shared/type-graphql.js';
import { Attendee } from './attendee.entity.js';

/** One page of an event's attendees, newest registration first, with the cursor of the next page. */
@ObjectType()
export class AttendeePage {
  @Field(() => [Attendee])
  data!: Attendee[];

  @Field(() => Boolean)
  hasMore!: boolean;

  @Field(() => String, { nullable: true })
  nextCursor!: string | null;
}
