import { randomUUID } from 'node:crypto';
import { OptionalProps } from '@mikro-orm/core';
import { Entity, Index, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';
import { DateTimeResolver } from '../../shared/scalars.js';
import { Field, ID, Int, ObjectType } from '../../shared/type-graphql.js';
import type { Mode } from '../../../core/principal.js';
import { EventStatus, eventStatusAt } from './event-status.js';
import { localDateTime } from './time-zone.js';

/**
 * An event of an account's organisation. Start and end are instants (timestamptz); the IANA time
 * zone says where the event takes place, for local times and for per-day analytics.
 */
@ObjectType({ description: 'An event members and guests register for and check in to.' })
@Entity({ tableName: 'event' })
@Index({ name: 'event_scope_created_index', properties: ['accountId', 'mode', 'createdAt', 'id'] })
export class Event {
  [OptionalProps]?:
    | 'id'
    | 'createdAt'
    | 'updatedAt'
    | 'livemode'
    | 'status'
    | 'registrationOpen'
    | 'startsAtLocal'
    | 'endsAtLocal'
    | 'price'
    | 'paymentTermHours'
    | 'cancelledAt';

  @Field(() => ID)
  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @Property({ type: 'uuid' })
  accountId!: string;

  @Property({ type: 'string', length: 4 })
  mode!: Mode;

  @Field(() => String)
  @Property({ type: 'string', length: 200 })
  title!: string;

  @Field(() => String, { nullable: true })
  @Property({ type: 'text', nullable: true })
  description?: string | null;

  @Field(() => DateTimeResolver)
  @Property({ type: 'datetime' })
  startsAt!: Date;

  @Field(() => DateTimeResolver)
  @Property({ type: 'datetime' })
  endsAt!: Date;

  @Field(() => String, { description: 'IANA time zone where the event takes place, e.g. Europe/Berlin.' })
  @Property({ type: 'string', length: 64 })
  timeZone!: string;

  @Field(() => String, { nullable: true })
  @Property({ type: 'string', length: 500, nullable: true })
  location?: string | null;

  @Field(() => Int, { nullable: true, description: 'Places available; null for unlimited.' })
  @Property({ type: 'integer', nullable: true })
  capacity?: number | null;

  @Field(() => DateTimeResolver, { nullable: true, description: 'Registration opens then; null: open from creation.' })
  @Property({ type: 'datetime', nullable: true })
  registrationOpensAt?: Date | null;

  @Field(() => DateTimeResolver, { description: 'Registration closes then; defaults to the start.' })
  @Property({ type: 'datetime' })
  registrationClosesAt!: Date;

  @Field(() => Int, { description: 'Price in minor units of the currency (cents); 0 for a free event.' })
  @Property({ type: 'integer' })
  price: number = 0;

  @Field(() => String, { nullable: true, description: 'ISO 4217 code; required when the price is above 0.' })
  @Property({ type: 'string', length: 3, nullable: true })
  currency?: string | null;

  @Field(() => Int, { description: 'A paid registration holds its place this many hours (at most until the start) for its invoice to be paid.' })
  @Property({ type: 'integer', default: 48 })
  paymentTermHours: number = DEFAULT_PAYMENT_TERM_HOURS;

  @Field(() => DateTimeResolver, { nullable: true })
  @Property({ type: 'datetime', nullable: true })
  cancelledAt?: Date | null;

  @Field(() => DateTimeResolver)
  @Property({ type: 'datetime' })
  createdAt: Date = new Date();

  @Field(() => DateTimeResolver)
  @Property({ type: 'datetime', onUpdate: () => new Date() })
  updatedAt: Date = new Date();

  @Field(() => Boolean, { description: 'True for live-mode data, false for test-mode (sandbox) data.' })
  get livemode(): boolean {
    return this.mode === 'live';
  }

  @Field(() => EventStatus)
  get status(): EventStatus {
    return eventStatusAt(this);
  }

  @Field(() => Boolean, { description: 'Whether a registration made now would be accepted (or waitlisted).' })
  get registrationOpen(): boolean {
    return registrationOpenAt(this);
  }

  @Field(() => String, { description: 'The start as local time with offset in the event time zone.' })
  get startsAtLocal(): string {
    return localDateTime(this.startsAt, this.timeZone);
  }

  @Field(() => String, { description: 'The end as local time with offset in the event time zone.' })
  get endsAtLocal(): string {
    return localDateTime(this.endsAt, this.timeZone);
  }
}

/** How long a paid registration holds its place for payment unless the event says otherwise. */
export const DEFAULT_PAYMENT_TERM_HOURS = 48;

/** When an unpaid registration made (or promoted) at `now` releases its place: the payment term later, at the latest the start. */
export function paymentDueAt(event: Event, now = new Date()): Date {
  return new Date(Math.min(now.getTime() + event.paymentTermHours * 3_600_000, event.startsAt.getTime()));
}

/** Registration is open inside its window on an event that is neither cancelled nor over. */
export function registrationOpenAt(event: Event, now = new Date()): boolean {
  if (eventStatusAt(event, now) !== EventStatus.SCHEDULED) return false;
  if (event.registrationOpensAt && now < event.registrationOpensAt) return false;
  return now < event.registrationClosesAt;
}
