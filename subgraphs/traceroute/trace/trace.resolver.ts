import { Arg, Args, Ctx, ID, Query, Resolver } from '../../shared/type-graphql.js';
import type { SubgraphContext } from '../../shared/context.js';
import { Trace } from './trace.entity.js';
import { TracesArgs } from './trace.inputs.js';
import { TracePage } from './trace-page.js';
import { TraceService } from './trace.service.js';

const service = (ctx: SubgraphContext) => new TraceService(ctx.em);

@Resolver(() => Trace)
export class TraceResolver {
  @Query(() => TracePage, { description: 'Traces, most recently measured first.' })
  traces(@Args(() => TracesArgs) args: TracesArgs, @Ctx() ctx: SubgraphContext): Promise<TracePage> {
    return service(ctx).list(args);
  }

  @Query(() => Trace, { nullable: true })
  trace(@Arg('id', () => ID) id: string, @Ctx() ctx: SubgraphContext): Promise<Trace | null> {
    return service(ctx).find(id);
  }
}
