import { randomUUID } from 'node:crypto';
import { OptionalProps } from '@mikro-orm/core';
import { Check, Entity, Index, PrimaryKey, Property, Unique } from '@mikro-orm/decorators/legacy';
import { DateTimeResolver, LocalDateResolver } from '../../../shared/scalars.js';
import { Field, ID, Int, ObjectType } from '../../../shared/type-graphql.js';
import type { Mode } from '../../../../core/principal.js';
import { today } from '../../member/member-status.js';
import { InvoiceLine } from './invoice-line.js';
import { InvoiceKind, InvoiceStatus, PAYABLE } from './invoice-status.js';

/**
 * An invoice to a member. Amounts are integer minor units of `currency`. `amountPaid` and
 * `amountRefunded` are running sums of its payments and their refunds, updated under the
 * invoice's row lock, so `amountRemaining` is what is still owed.
 */
@ObjectType({ description: 'An invoice to a member, in integer minor units of one currency.' })
@Entity({ tableName: 'invoice' })
// What the services keep under row locks, held by the database too.
@Check({ name: 'invoice_amounts_check', expression: 'amount_refunded >= 0 and amount_refunded <= amount_paid and amount_paid - amount_refunded <= total' })
@Unique({ name: 'invoice_scope_number_unique', properties: ['accountId', 'mode', 'number'] })
@Index({ name: 'invoice_scope_created_index', properties: ['accountId', 'mode', 'createdAt', 'id'] })
@Index({ name: 'invoice_scope_member_index', properties: ['accountId', 'mode', 'memberId', 'createdAt'] })
@Index({ name: 'invoice_scope_issued_index', properties: ['accountId', 'mode', 'issuedOn'] })
export class Invoice {
  [OptionalProps]?: 'id' | 'createdAt' | 'updatedAt' | 'livemode' | 'amountPaid' | 'amountRefunded' | 'amountRemaining' | 'overdue' | 'unpaid';

  @Field(() => ID)
  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @Property({ type: 'uuid' })
  accountId!: string;

  @Property({ type: 'string', length: 4 })
  mode!: Mode;

  @Field(() => String, { nullable: true, description: 'INV-000001, per account and mode; given at finalisation.' })
  @Property({ type: 'string', length: 20, nullable: true })
  number?: string | null;

  @Field(() => ID)
  @Property({ type: 'uuid' })
  memberId!: string;

  /** The member's category when the invoice was raised, for reports by category. */
  @Field(() => ID, { nullable: true })
  @Property({ type: 'uuid', nullable: true })
  categoryId?: string | null;

  @Field(() => InvoiceKind)
  @Property({ type: 'string', length: 12 })
  kind!: InvoiceKind;

  @Field(() => InvoiceStatus)
  @Property({ type: 'string', length: 14 })
  status!: InvoiceStatus;

  @Field(() => String, { description: 'ISO 4217, upper case.' })
  @Property({ type: 'string', length: 3 })
  currency!: string;

  @Field(() => String, { nullable: true })
  @Property({ type: 'string', length: 500, nullable: true })
  description?: string | null;

  @Field(() => [InvoiceLine])
  @Property({ type: 'json' })
  lines!: InvoiceLine[];

  @Field(() => Int, { description: 'Sum of the lines.' })
  @Property({ type: 'integer' })
  total!: number;

  @Field(() => Int, { description: 'Sum of payments received.' })
  @Property({ type: 'integer' })
  amountPaid: number = 0;

  @Field(() => Int, { description: 'Sum of refunds of those payments.' })
  @Property({ type: 'integer' })
  amountRefunded: number = 0;

  @Field(() => LocalDateResolver, { nullable: true, description: 'Date of finalisation; null for drafts.' })
  @Property({ type: 'date', nullable: true })
  issuedOn?: string | null;

  @Field(() => LocalDateResolver)
  @Property({ type: 'date' })
  dueOn!: string;

  @Field(() => LocalDateResolver, { nullable: true, description: 'Membership period the invoice pays for.' })
  @Property({ type: 'date', nullable: true })
  periodStart?: string | null;

  @Field(() => LocalDateResolver, { nullable: true })
  @Property({ type: 'date', nullable: true })
  periodEnd?: string | null;

  @Field(() => ID, { nullable: true, description: 'An EVENT invoice: the registration (event attendee) it pays for.' })
  @Property({ type: 'uuid', nullable: true })
  attendeeId?: string | null;

  /** A renewal's: the member's period its payment replaced, restored if a refund takes the renewal back. */
  @Property({ type: 'date', nullable: true })
  replacedPeriodStart?: string | null;

  @Property({ type: 'date', nullable: true })
  replacedPeriodEnd?: string | null;

  @Field(() => DateTimeResolver, { nullable: true })
  @Property({ type: 'datetime', nullable: true })
  paidAt?: Date | null;

  @Field(() => DateTimeResolver, { nullable: true })
  @Property({ type: 'datetime', nullable: true })
  voidedAt?: Date | null;

  @Field(() => DateTimeResolver)
  @Property({ type: 'datetime' })
  createdAt: Date = new Date();

  @Field(() => DateTimeResolver)
  @Property({ type: 'datetime', onUpdate: () => new Date() })
  updatedAt: Date = new Date();

  @Field(() => Boolean)
  get livemode(): boolean {
    return this.mode === 'live';
  }

  @Field(() => Int, { description: 'total − amountPaid + amountRefunded: still owed (0 unless OPEN or UNCOLLECTIBLE).' })
  get amountRemaining(): number {
    return PAYABLE.includes(this.status) ? this.unpaid : 0;
  }

  /** The total less what was paid and not refunded, whatever the status. */
  get unpaid(): number {
    return this.total - this.amountPaid + this.amountRefunded;
  }

  @Field(() => Boolean, { description: 'OPEN and past its due date.' })
  get overdue(): boolean {
    return this.status === InvoiceStatus.OPEN && this.dueOn < today();
  }
}
