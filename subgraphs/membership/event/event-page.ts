import { Field, ObjectType } from '../../shared/type-graphql.js';
import { Event } from './event.entity.js';

/** One page of events, newest first, with the cursor of the next page. */
@ObjectType()
export class EventPage {
  @Field(() => [Event])
  data!: Event[];

  @Field(() => Boolean)
  hasMore!: boolean;

  @Field(() => String, { nullable: true })
  nextCursor!: string | null;
}
