import { IsEmail, IsOptional, Length, Matches, Max, Min } from 'class-validator';
import { DateTimeResolver } from '../../shared/scalars.js';
import { ArgsType, Field, ID, Int } from '../../shared/type-graphql.js';
import { AttendeeStatus } from './attendee-status.js';
import { EventStatus } from './event-status.js';
import { PageArgs } from '../../shared/page.args.js';

// Arguments are flat, so the REST bridge reads a JSON body straight into them; the event's id
// is `id` wherever it is in the REST path (/events/{id}/register).

@ArgsType()
export class CreateEventArgs {
  @Field(() => String)
  @Length(1, 200)
  @Matches(/\S/, { message: 'title must not be blank' })
  title!: string;

  @Field(() => String, { nullable: true })
  @IsOptional()
  @Length(0, 5000)
  description?: string | null;

  @Field(() => DateTimeResolver, { description: 'RFC 3339 with offset, e.g. 2026-12-01T19:00:00+01:00.' })
  startsAt!: Date;

  @Field(() => DateTimeResolver)
  endsAt!: Date;

  @Field(() => String, { description: 'IANA time zone where the event takes place, e.g. Europe/Berlin.' })
  @Length(1, 64)
  timeZone!: string;

  @Field(() => String, { nullable: true })
  @IsOptional()
  @Length(0, 500)
  location?: string | null;

  @Field(() => Int, { nullable: true, description: 'Places available; omit or null for unlimited.' })
  @IsOptional()
  @Min(1, { message: 'capacity must be at least 1, or null for unlimited' })
  @Max(1_000_000)
  capacity?: number | null;

  @Field(() => DateTimeResolver, { nullable: true, description: 'Defaults to now: open at once.' })
  @IsOptional()
  registrationOpensAt?: Date | null;

  @Field(() => DateTimeResolver, { nullable: true, description: 'Defaults to the start; at the latest the end.' })
  @IsOptional()
  registrationClosesAt?: Date | null;

  @Field(() => Int, { nullable: true, description: 'Price in minor units (cents); default 0, free.' })
  @IsOptional()
  @Min(0)
  @Max(100_000_000)
  price?: number | null;

  @Field(() => String, { nullable: true, description: 'ISO 4217 code, e.g. EUR; required when the price is above 0.' })
  @IsOptional()
  @Matches(/^[A-Za-z]{3}$/, { message: 'currency must be a three-letter ISO 4217 code' })
  currency?: string | null;

  @Field(() => Int, { nullable: true, description: 'Paid events: hours a registration holds its place for its invoice to be paid, 1 to 8760; default 48 (at most until the start).' })
  @IsOptional()
  @Min(1)
  @Max(8760)
  paymentTermHours?: number | null;
}

/** What an organiser may change on a scheduled event; absent fields are kept, null clears where it may. */
@ArgsType()
export class UpdateEventArgs {
  @Field(() => ID)
  id!: string;

  @Field(() => String, { nullable: true })
  @IsOptional()
  @Length(1, 200)
  @Matches(/\S/, { message: 'title must not be blank' })
  title?: string | null;

  @Field(() => String, { nullable: true })
  @IsOptional()
  @Length(0, 5000)
  description?: string | null;

  @Field(() => DateTimeResolver, { nullable: true, description: 'A new start, in the future.' })
  @IsOptional()
  startsAt?: Date | null;

  @Field(() => DateTimeResolver, { nullable: true })
  @IsOptional()
  endsAt?: Date | null;

  @Field(() => String, { nullable: true })
  @IsOptional()
  @Length(1, 64)
  timeZone?: string | null;

  @Field(() => String, { nullable: true })
  @IsOptional()
  @Length(0, 500)
  location?: string | null;

  @Field(() => Int, { nullable: true, description: 'null: unlimited. An increase promotes the waitlist in order; below the places taken is 409 capacity_below_taken.' })
  @IsOptional()
  @Min(1, { message: 'capacity must be at least 1, or null for unlimited' })
  @Max(1_000_000)
  capacity?: number | null;

  @Field(() => DateTimeResolver, { nullable: true, description: 'null: open from now.' })
  @IsOptional()
  registrationOpensAt?: Date | null;

  @Field(() => DateTimeResolver, { nullable: true })
  @IsOptional()
  registrationClosesAt?: Date | null;

  @Field(() => Int, { nullable: true, description: 'Only before the first registration (409 event_has_registrations).' })
  @IsOptional()
  @Min(0)
  @Max(100_000_000)
  price?: number | null;

  @Field(() => String, { nullable: true, description: 'Only before the first registration.' })
  @IsOptional()
  @Matches(/^[A-Za-z]{3}$/, { message: 'currency must be a three-letter ISO 4217 code' })
  currency?: string | null;

  @Field(() => Int, { nullable: true, description: 'For registrations made (or promoted) from now on.' })
  @IsOptional()
  @Min(1)
  @Max(8760)
  paymentTermHours?: number | null;
}

@ArgsType()
export class EventsArgs extends PageArgs {
  @Field(() => EventStatus, { nullable: true })
  status?: EventStatus | null;

  @Field(() => DateTimeResolver, { nullable: true, description: 'Only events starting at or after this instant.' })
  startsAfter?: Date | null;

  @Field(() => DateTimeResolver, { nullable: true, description: 'Only events starting before this instant.' })
  startsBefore?: Date | null;
}

@ArgsType()
export class RegisterArgs {
  @Field(() => ID, { description: 'The event.' })
  id!: string;

  @Field(() => ID, { nullable: true, description: 'A member of the account; or give guestName and guestEmail.' })
  @IsOptional()
  memberId?: string | null;

  @Field(() => String, { nullable: true })
  @IsOptional()
  @Length(1, 200)
  @Matches(/\S/, { message: 'guestName must not be blank' })
  guestName?: string | null;

  @Field(() => String, { nullable: true })
  @IsOptional()
  @IsEmail({}, { message: 'guestEmail must be a valid email address' })
  @Length(3, 320)
  guestEmail?: string | null;
}

@ArgsType()
export class AttendeesArgs extends PageArgs {
  @Field(() => ID, { description: 'The event.' })
  id!: string;

  @Field(() => AttendeeStatus, { nullable: true })
  status?: AttendeeStatus | null;

  @Field(() => String, { nullable: true, description: 'Matches name or email, case-insensitively.' })
  @IsOptional()
  @Length(1, 200)
  search?: string | null;

  @Field(() => Boolean, { nullable: true, description: 'true: guests only; false: members only.' })
  guest?: boolean | null;
}

@ArgsType()
export class CheckInArgs {
  @Field(() => ID, { description: 'The event.' })
  id!: string;

  @Field(() => ID, { nullable: true, description: 'The attendee; or give the code.' })
  @IsOptional()
  attendeeId?: string | null;

  @Field(() => String, { nullable: true, description: 'The check-in code given at registration.' })
  @IsOptional()
  @Length(1, 64)
  code?: string | null;
}

@ArgsType()
export class CancelRegistrationArgs {
  @Field(() => ID, { description: 'The event.' })
  id!: string;

  @Field(() => ID)
  attendeeId!: string;
}
