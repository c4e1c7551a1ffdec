import { LocalDateResolver } from '../../../shared/scalars.js';
import { Field, ObjectType } from '../../../shared/type-graphql.js';
import { CurrencyReport } from './currency-report.js';

/** The finance report for a window of days. */
@ObjectType({ description: 'Revenue, payments, refunds, receivables and overdue amounts for a window, per currency.' })
export class FinanceReport {
  @Field(() => LocalDateResolver)
  from!: string;

  @Field(() => LocalDateResolver)
  to!: string;

  @Field(() => LocalDateResolver, { description: 'The day outstanding and overdue amounts are taken on.' })
  asOf!: string;

  @Field(() => [CurrencyReport])
  currencies!: CurrencyReport[];
}
