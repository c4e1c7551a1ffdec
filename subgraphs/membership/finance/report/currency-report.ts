import { Field, ObjectType } from '../../../shared/type-graphql.js';
import { CategoryFigures } from './category-figures.js';
import { MonthFigures } from './month-figures.js';
import { ReportFigures } from './report-figures.js';

/** Everything of one currency: amounts in different currencies are never added up. */
@ObjectType()
export class CurrencyReport {
  @Field(() => String)
  currency!: string;

  @Field(() => ReportFigures)
  totals!: ReportFigures;

  @Field(() => [MonthFigures], { description: 'Every month of the window, in order.' })
  byMonth!: MonthFigures[];

  @Field(() => [CategoryFigures], { description: 'Categories with any figure in the window.' })
  byCategory!: CategoryFigures[];
}
