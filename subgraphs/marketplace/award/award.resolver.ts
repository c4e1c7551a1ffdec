import { Args, Ctx, Mutation, Resolver } from '../../shared/type-graphql.js';
import type { SubgraphContext } from '../../shared/context.js';
import { Tender } from '../tender/tender.entity.js';
import { AwardTenderArgs, CancelAwardArgs } from './award.inputs.js';
import { AwardService } from './award.service.js';

const service = (ctx: SubgraphContext) => new AwardService(ctx.em, ctx.principal);

@Resolver()
export class AwardResolver {
  @Mutation(() => Tender, {
    description: 'Awards a lot (or the tender) after the deadline to its best valid bid: lowest price, or the highest weighted score. Losing bids become UNSUCCESSFUL. Confirms a pending award.',
  })
  awardTender(@Args(() => AwardTenderArgs) args: AwardTenderArgs, @Ctx() ctx: SubgraphContext): Promise<Tender> {
    return service(ctx).award(args);
  }

  @Mutation(() => Tender, { description: "Cancels a lot's award before the tender completes, with a reason: the next best valid bid becomes the pending award." })
  cancelAward(@Args(() => CancelAwardArgs) args: CancelAwardArgs, @Ctx() ctx: SubgraphContext): Promise<Tender> {
    return service(ctx).cancel(args);
  }
}
