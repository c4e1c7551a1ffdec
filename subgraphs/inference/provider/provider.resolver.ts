import { Arg, Ctx, ID, Query, Resolver } from '../../shared/type-graphql.js';
import type { SubgraphContext } from '../../shared/context.js';
import { Provider } from './provider.entity.js';
import { ProviderService } from './provider.service.js';

const service = (ctx: SubgraphContext) => new ProviderService(ctx.em);

@Resolver(() => Provider)
export class ProviderResolver {
  @Query(() => [Provider], { description: 'Every provider, ordered by id.' })
  providers(@Ctx() ctx: SubgraphContext): Promise<Provider[]> {
    return service(ctx).list();
  }

  @Query(() => Provider, { nullable: true })
  provider(@Arg('id', () => ID) id: string, @Ctx() ctx: SubgraphContext): Promise<Provider | null> {
    return service(ctx).find(id);
  }
}
