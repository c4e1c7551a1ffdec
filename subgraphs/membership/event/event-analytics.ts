import { Field, Float, Int, ObjectType } from '../../shared/type-graphql.js';
import { RegistrationDay } from './registration-day.js';

/** Figures on one event's registrations, computed by SQL aggregates when asked for. */
@ObjectType()
export class EventAnalytics {
  @Field(() => Int, { description: 'Attendees holding a place: registered or checked in.' })
  registered!: number;

  @Field(() => Int)
  checkedIn!: number;

  @Field(() => Int, { description: 'Places of a paid event held PENDING for their invoices to be paid.' })
  pendingPayment!: number;

  @Field(() => Int)
  waitlistLength!: number;

  @Field(() => Int)
  cancelled!: number;

  @Field(() => Float, { nullable: true, description: '(registered + pendingPayment) / capacity, 0 to 1; null for unlimited capacity.' })
  capacityUsed!: number | null;

  @Field(() => Float, { nullable: true, description: 'checkedIn / registered, 0 to 1; null while nobody is registered.' })
  checkInRate!: number | null;

  @Field(() => Int, {
    nullable: true,
    description: 'Registered attendees who did not check in; null until the event has ended, and for a cancelled event.',
  })
  noShows!: number | null;

  @Field(() => [RegistrationDay], {
    description: 'Registrations per day in the event time zone, every day from the first registration to the last.',
  })
  registrationsOverTime!: RegistrationDay[];
}
