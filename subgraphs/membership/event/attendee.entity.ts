import { randomUUID } from 'node:crypto';
import { OptionalProps } from '@mikro-orm/core';
import { Entity, Index, ManyToOne, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';
import { DateTimeResolver } from '../../shared/scalars.js';
import { Field, ID, Int, ObjectType } from '../../shared/type-graphql.js';
import type { Mode } from '../../../core/principal.js';
import { Member } from '../member/member.entity.js';
import { AttendeeStatus } from './attendee-status.js';
import { Event } from './event.entity.js';

/**
 * One registration for an event, by a member or by a guest. Name and email are kept as given at
 * registration (a member's are copied), as on a ticket. At most one registration that is not
 * cancelled per member and per email address and event.
 */
@ObjectType({ description: 'A registration for an event: registered, waitlisted, cancelled or checked in.' })
@Entity({ tableName: 'event_attendee' })
@Index({ name: 'event_attendee_event_created_index', properties: ['event', 'createdAt', 'id'] })
// The clock finds unpaid registrations past their deadline without reading the others.
@Index({
  name: 'event_attendee_payment_due_index',
  expression: 'create index "event_attendee_payment_due_index" on "membership"."event_attendee" ("payment_due_at") where "status" = \'pending\'',
})
@Index({
  name: 'event_attendee_waitlist_index',
  expression:
    'create index "event_attendee_waitlist_index" on "membership"."event_attendee" ("event_id", "waitlist_number") where "status" = \'waitlisted\'',
})
@Index({
  name: 'event_attendee_email_unique',
  expression:
    'create unique index "event_attendee_email_unique" on "membership"."event_attendee" ("event_id", "email") where "status" <> \'cancelled\'',
})
@Index({
  name: 'event_attendee_member_unique',
  expression:
    'create unique index "event_attendee_member_unique" on "membership"."event_attendee" ("event_id", "member_id") where "status" <> \'cancelled\'',
})
@Index({
  name: 'event_attendee_code_unique',
  expression: 'create unique index "event_attendee_code_unique" on "membership"."event_attendee" ("event_id", "code_hash")',
})
export class Attendee {
  [OptionalProps]?:
    | 'id'
    | 'createdAt'
    | 'updatedAt'
    | 'livemode'
    | 'guest'
    | 'eventId'
    | 'memberId'
    | 'waitlistNumber'
    | 'waitlistPosition'
    | 'code'
    | 'promotedAt'
    | 'checkedInAt'
    | 'cancelledAt'
    | 'invoiceId'
    | 'paymentDueAt'
    | 'cancellationReason';

  @Field(() => ID)
  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @Property({ type: 'uuid' })
  accountId!: string;

  @Property({ type: 'string', length: 4 })
  mode!: Mode;

  @ManyToOne(() => Event, { deleteRule: 'cascade' })
  event!: Event;

  @ManyToOne(() => Member, { nullable: true })
  member?: Member | null;

  @Field(() => String)
  @Property({ type: 'string', length: 200 })
  name!: string;

  /** Lower-cased, like members' addresses. */
  @Field(() => String)
  @Property({ type: 'string', length: 320 })
  email!: string;

  @Field(() => AttendeeStatus)
  @Property({ type: 'string', length: 12 })
  status!: AttendeeStatus;

  /** Order of arrival on the waitlist, fixed when the attendee joins it; null off the waitlist. */
  @Property({ type: 'integer', nullable: true })
  waitlistNumber?: number | null;

  /** SHA-256 of the check-in code: the code itself is shown once, when the registration is made. */
  @Property({ type: 'string', length: 64 })
  codeHash!: string;

  @Field(() => DateTimeResolver, { description: 'When the registration was made.' })
  @Property({ type: 'datetime' })
  createdAt: Date = new Date();

  @Field(() => DateTimeResolver)
  @Property({ type: 'datetime', onUpdate: () => new Date() })
  updatedAt: Date = new Date();

  @Field(() => DateTimeResolver, { nullable: true, description: 'When a place freed up and the attendee left the waitlist.' })
  @Property({ type: 'datetime', nullable: true })
  promotedAt?: Date | null;

  @Field(() => DateTimeResolver, { nullable: true, description: 'The first check-in; later ones do not change it.' })
  @Property({ type: 'datetime', nullable: true })
  checkedInAt?: Date | null;

  @Field(() => DateTimeResolver, { nullable: true })
  @Property({ type: 'datetime', nullable: true })
  cancelledAt?: Date | null;

  @Field(() => String, { nullable: true, description: 'Why a CANCELLED registration was cancelled when it was not asked for: payment_overdue (its invoice was not paid by paymentDueAt).' })
  @Property({ type: 'string', length: 20, nullable: true })
  cancellationReason?: string | null;

  @Field(() => ID, { nullable: true, description: "A paid event's registration: the invoice for its place." })
  @Property({ type: 'uuid', nullable: true })
  invoiceId?: string | null;

  @Field(() => DateTimeResolver, { nullable: true, description: 'While PENDING: the place is released to the waitlist if the invoice is not paid by then.' })
  @Property({ type: 'datetime', nullable: true })
  paymentDueAt?: Date | null;

  @Field(() => Int, { nullable: true, description: 'Place in the waitlist, 1 first; null when not waitlisted.' })
  waitlistPosition?: number | null;

  @Field(() => String, { nullable: true, description: 'The check-in code, in the registration answer only; null later.' })
  code?: string | null;

  @Field(() => ID)
  get eventId(): string {
    return this.event.id;
  }

  @Field(() => ID, { nullable: true })
  get memberId(): string | null {
    return this.member?.id ?? null;
  }

  @Field(() => Boolean, { description: 'True for a guest, false for a member.' })
  get guest(): boolean {
    return !this.member;
  }

  @Field(() => Boolean, { description: 'True for live-mode data, false for test-mode (sandbox) data.' })
  get livemode(): boolean {
    return this.mode === 'live';
  }
}
