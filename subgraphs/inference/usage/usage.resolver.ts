import { Arg, Args, Ctx, ID, Query, Resolver } from '../../shared/type-graphql.js';
import type { SubgraphContext } from '../../shared/context.js';
import { UsageArgs, UsageSummaryArgs } from './usage.inputs.js';
import { UsageRecord } from './usage-record.entity.js';
import { UsageRecordPage } from './usage-record-page.js';
import { UsageService } from './usage.service.js';
import { UsageSummary } from './usage-summary.js';

const service = (ctx: SubgraphContext) => new UsageService(ctx.em);

@Resolver(() => UsageRecord)
export class UsageResolver {
  @Query(() => UsageRecordPage, {
    description: "Inference calls in a window, newest first: a text or image key's own account's; every call, keyless ones too, for an admin key.",
  })
  inferenceUsage(@Args(() => UsageArgs) args: UsageArgs, @Ctx() ctx: SubgraphContext): Promise<UsageRecordPage> {
    return service(ctx).list(ctx.principal, args);
  }

  @Query(() => UsageRecord, { nullable: true, description: 'One usage record; null when unknown or out of the key\'s scope.' })
  async inferenceUsageRecord(@Arg('id', () => ID) id: string, @Ctx() ctx: SubgraphContext): Promise<UsageRecord | null> {
    return (await service(ctx).findMany(ctx.principal, [id]))[0];
  }

  @Query(() => UsageSummary, { description: 'Calls, tokens and p50/p95 latency over a window, grouped; scoped like inferenceUsage.' })
  inferenceUsageSummary(@Args(() => UsageSummaryArgs) args: UsageSummaryArgs, @Ctx() ctx: SubgraphContext): Promise<UsageSummary> {
    return service(ctx).summary(ctx.principal, args);
  }
}
