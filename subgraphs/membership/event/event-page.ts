import { ObjectType } from '../../shared/type-graphql.js';
import { PageOf } from '../../shared/page.type.js';
import { Event } from './event.entity.js';

/** One page of events, newest first, with the cursor of the next page. */
@ObjectType()
export class EventPage extends PageOf(Event) {}
