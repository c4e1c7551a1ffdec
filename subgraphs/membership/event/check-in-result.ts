import { DateTimeResolver } from '../../shared/scalars.js';
import { Field, ObjectType } from '../../shared/type-graphql.js';
import { Attendee } from './attendee.entity.js';

/** What a check-in answers; a repeated check-in is not an error, it says when the first one was. */
@ObjectType()
export class CheckInResult {
  @Field(() => Attendee)
  attendee!: Attendee;

  @Field(() => Boolean, { description: 'True when the attendee had been checked in before this request.' })
  alreadyCheckedIn!: boolean;

  @Field(() => DateTimeResolver, { description: 'The first check-in.' })
  checkedInAt!: Date;
}
