import { ObjectType } from '../../shared/type-graphql.js';
import { PageOf } from '../../shared/page.type.js';
import { Attendee } from './attendee.entity.js';

/** One page of an event's attendees, newest registration first, with the cursor of the next page. */
@ObjectType()
export class AttendeePage extends PageOf(Attendee) {}
