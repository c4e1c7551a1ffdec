import { LocalDateResolver } from '../../../shared/scalars.js';
import { ArgsType, Field } from '../../../shared/type-graphql.js';

@ArgsType()
export class FinanceReportArgs {
  @Field(() => LocalDateResolver, { description: 'First day of the window (UTC).' })
  from!: string;

  @Field(() => LocalDateResolver, { description: 'Last day of the window, included; at most 10 years after from.' })
  to!: string;
}
