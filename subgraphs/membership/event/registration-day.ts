import { LocalDateResolver } from '../../shared/scalars.js';
import { Field, Int, ObjectType } from '../../shared/type-graphql.js';

/** Registrations made on one calendar day in the event's time zone. */
@ObjectType()
export class RegistrationDay {
  @Field(() => LocalDateResolver)
  date!: string;

  @Field(() => Int, { description: 'Registrations made that day, whatever their status now (waitlisted and cancelled too).' })
  registrations!: number;

  @Field(() => Int, { description: 'Registrations made up to and including that day.' })
  cumulative!: number;
}
