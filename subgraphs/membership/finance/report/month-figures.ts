import { Field, ObjectType } from '../../../shared/type-graphql.js';
import { ReportFigures } from './report-figures.js';

/** One calendar month (UTC) of the window. */
@ObjectType()
export class MonthFigures extends ReportFigures {
  @Field(() => String, { description: 'YYYY-MM' })
  month!: string;
}
