import { randomUUID } from 'node:crypto';
import { OptionalProps } from '@mikro-orm/core';
import { Check, Entity, Index, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';
import { DateTimeResolver } from '../../../shared/scalars.js';
import { Field, ID, Int, ObjectType } from '../../../shared/type-graphql.js';
import type { Mode } from '../../../../core/principal.js';
import { PaymentMethod } from './payment-method.js';

/** Money received against an invoice. `amountRefunded` is the running sum of its refunds. */
@ObjectType({ description: 'A payment recorded against an invoice.' })
@Entity({ tableName: 'payment' })
@Check({ name: 'payment_amounts_check', expression: 'amount > 0 and amount_refunded >= 0 and amount_refunded <= amount' })
@Index({ name: 'payment_scope_created_index', properties: ['accountId', 'mode', 'createdAt', 'id'] })
@Index({ name: 'payment_scope_received_index', properties: ['accountId', 'mode', 'receivedAt'] })
@Index({ name: 'payment_invoice_index', properties: ['invoiceId'] })
export class Payment {
  [OptionalProps]?: 'id' | 'createdAt' | 'livemode' | 'amountRefunded' | 'amountRefundable';

  @Field(() => ID)
  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @Property({ type: 'uuid' })
  accountId!: string;

  @Property({ type: 'string', length: 4 })
  mode!: Mode;

  @Field(() => ID)
  @Property({ type: 'uuid' })
  invoiceId!: string;

  @Field(() => ID)
  @Property({ type: 'uuid' })
  memberId!: string;

  /** The invoice's category, kept here so reports group payments without a join. */
  @Property({ type: 'uuid', nullable: true })
  categoryId?: string | null;

  @Field(() => Int, { description: 'Minor units.' })
  @Property({ type: 'integer' })
  amount!: number;

  @Field(() => String)
  @Property({ type: 'string', length: 3 })
  currency!: string;

  @Field(() => PaymentMethod)
  @Property({ type: 'string', length: 16 })
  method!: PaymentMethod;

  @Field(() => String, { nullable: true, description: 'e.g. a bank reference or cheque number.' })
  @Property({ type: 'string', length: 200, nullable: true })
  reference?: string | null;

  @Field(() => DateTimeResolver)
  @Property({ type: 'datetime' })
  receivedAt!: Date;

  @Field(() => Int)
  @Property({ type: 'integer' })
  amountRefunded: number = 0;

  @Field(() => DateTimeResolver)
  @Property({ type: 'datetime' })
  createdAt: Date = new Date();

  @Field(() => Boolean)
  get livemode(): boolean {
    return this.mode === 'live';
  }

  @Field(() => Int)
  get amountRefundable(): number {
    return this.amount - this.amountRefunded;
  }
}
