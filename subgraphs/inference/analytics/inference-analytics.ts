import { DateTimeResolver } from '../../shared/scalars.js';
import { Field, ObjectType } from '../../shared/type-graphql.js';
import { UsageInterface } from '../usage/usage-interface.js';
import type { AnalyticsArgs } from './analytics.inputs.js';
import type { AnalyticsScope } from './analytics-scope.js';

/**
 * Analytics over one range and filter. Its sections (usage, performance, history) are field
 * resolvers, so a query pays only for the sections it selects.
 */
@ObjectType('InferenceAnalytics')
export class InferenceAnalytics {
  @Field(() => DateTimeResolver)
  from!: Date;

  @Field(() => DateTimeResolver)
  to!: Date;

  @Field(() => String, { nullable: true })
  provider!: string | null;

  @Field(() => String, { nullable: true })
  model!: string | null;

  @Field(() => UsageInterface, { nullable: true })
  interface!: UsageInterface | null;

  /** The checked arguments and the caller's scope, for the section resolvers; not in the schema. */
  args!: AnalyticsArgs;
  scope!: AnalyticsScope;
}
