import type { SubgraphContext } from '../../shared/context.js';
import { Args, Ctx, FieldResolver, Query, Resolver, Root } from '../../shared/type-graphql.js';
import { UsageRecordPage } from '../usage/usage-record-page.js';
import { checkedWindow } from '../usage/usage.service.js';
import { checkedBucket } from './analytics-bucket.js';
import { AnalyticsArgs } from './analytics.inputs.js';
import { scopeOfPrincipal } from './analytics-scope.js';
import { AnalyticsService, decodeHistoryCursor } from './analytics.service.js';
import { InferenceAnalytics } from './inference-analytics.js';
import { ModelPerformance } from './model-performance.js';
import { UsageStatistics } from './usage-statistics.js';

const service = (ctx: SubgraphContext) => new AnalyticsService(ctx.em);

@Resolver(() => InferenceAnalytics)
export class AnalyticsResolver {
  @Query(() => InferenceAnalytics, {
    description: "Usage statistics, model performance and call history over a range; a text or image key's own account's calls, every call for an admin key.",
  })
  inferenceAnalytics(@Args(() => AnalyticsArgs) args: AnalyticsArgs, @Ctx() ctx: SubgraphContext): InferenceAnalytics {
    // Checked here, so a bad range, bucket or cursor is one error, not one per selected section.
    checkedWindow(args);
    checkedBucket(args.from, args.to, args.bucket);
    if (args.after) decodeHistoryCursor(args.after);
    return Object.assign(new InferenceAnalytics(), {
      from: args.from,
      to: args.to,
      provider: args.provider ?? null,
      model: args.model ?? null,
      interface: args.interface ?? null,
      args,
      scope: scopeOfPrincipal(ctx.principal),
    });
  }

  @FieldResolver(() => UsageStatistics, { description: 'Calls, tokens and errors per time bucket, provider, model and interface.' })
  usage(@Root() root: InferenceAnalytics, @Ctx() ctx: SubgraphContext): Promise<UsageStatistics> {
    return service(ctx).usage(root.scope, root.args, root.args.bucket);
  }

  @FieldResolver(() => [ModelPerformance], { description: 'Latency, time to first token, throughput and error rate per provider and model, most calls first.' })
  performance(@Root() root: InferenceAnalytics, @Ctx() ctx: SubgraphContext): Promise<ModelPerformance[]> {
    return service(ctx).performance(root.scope, root.args);
  }

  @FieldResolver(() => UsageRecordPage, { description: 'The calls, newest first; limit and after page it.' })
  history(@Root() root: InferenceAnalytics, @Ctx() ctx: SubgraphContext): Promise<UsageRecordPage> {
    return service(ctx).history(root.scope, root.args);
  }
}
