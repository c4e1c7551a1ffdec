import { SafeIntResolver } from 'graphql-scalars';
import { Field, ObjectType } from '../../../shared/type-graphql.js';

/**
 * Amounts in minor units of one currency. invoiced: totals of invoices issued in the window
 * (not drafts, not void). payments / refunds: received / made in the window. revenue:
 * payments − refunds. outstanding: what OPEN invoices issued in the window still owe now;
 * overdue: the part of that past its due date.
 */
@ObjectType({ description: 'Report figures in minor units of one currency.' })
export class ReportFigures {
  @Field(() => SafeIntResolver)
  invoiced = 0;

  @Field(() => SafeIntResolver)
  payments = 0;

  @Field(() => SafeIntResolver)
  paymentCount = 0;

  @Field(() => SafeIntResolver)
  refunds = 0;

  @Field(() => SafeIntResolver)
  refundCount = 0;

  @Field(() => SafeIntResolver, { description: 'payments − refunds.' })
  revenue = 0;

  @Field(() => SafeIntResolver)
  outstanding = 0;

  @Field(() => SafeIntResolver)
  overdue = 0;
}
