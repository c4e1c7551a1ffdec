import { Arg, Args, Ctx, ID, Mutation, Query, Resolver } from '../../../shared/type-graphql.js';
import type { SubgraphContext } from '../../../shared/context.js';
import { Refund } from './refund.entity.js';
import { CreateRefundArgs, RefundsArgs } from './refund.inputs.js';
import { RefundPage } from './refund-page.js';
import { RefundService } from './refund.service.js';

const service = (ctx: SubgraphContext) => new RefundService(ctx.em, ctx.principal);

@Resolver(() => Refund)
export class RefundResolver {
  @Query(() => RefundPage, { description: 'Refunds, newest first.' })
  refunds(@Args(() => RefundsArgs) args: RefundsArgs, @Ctx() ctx: SubgraphContext): Promise<RefundPage> {
    return service(ctx).list(args);
  }

  @Query(() => Refund, { nullable: true })
  refund(@Arg('id', () => ID) id: string, @Ctx() ctx: SubgraphContext): Promise<Refund | null> {
    return service(ctx).find(id);
  }

  @Mutation(() => Refund, { description: 'Refunds part or all of a payment; the invoice is OPEN again if no longer covered.' })
  createRefund(@Args(() => CreateRefundArgs) args: CreateRefundArgs, @Ctx() ctx: SubgraphContext): Promise<Refund> {
    return service(ctx).create(args);
  }
}
