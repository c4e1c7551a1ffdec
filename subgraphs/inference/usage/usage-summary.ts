import { DateTimeResolver } from '../../shared/scalars.js';
import { Field, ObjectType } from '../../shared/type-graphql.js';
import { UsageGroup } from './usage-group.js';
import { UsageGroupBy } from './usage-group-by.js';

/** Usage figures over a window, per group, most requests first. */
@ObjectType('InferenceUsageSummary')
export class UsageSummary {
  @Field(() => DateTimeResolver)
  from!: Date;

  @Field(() => DateTimeResolver)
  to!: Date;

  @Field(() => [UsageGroupBy])
  groupBy!: UsageGroupBy[];

  @Field(() => [UsageGroup], { description: 'Without groupBy, one group: the totals.' })
  groups!: UsageGroup[];

  @Field(() => Boolean, { description: 'Whether groups past the first 1000 (by requests) were left out.' })
  truncated!: boolean;
}
