import { Arg, Ctx, ID, Mutation, Query, Resolver, Root, Subscription } from '../../shared/type-graphql.js';
import type { SubgraphContext } from '../../shared/context.js';
import { Provider } from './provider.entity.js';
import { PROVIDER_STATUS_TOPIC, ProviderService } from './provider.service.js';
import { ProviderStatus } from './provider-status.js';

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

  @Mutation(() => Provider, { description: 'Admin: sets a provider status; live status subscribers see it.' })
  setProviderStatus(
    @Arg('id', () => ID) id: string,
    @Arg('status', () => ProviderStatus) status: ProviderStatus,
    @Ctx() ctx: SubgraphContext,
  ): Promise<Provider> {
    return service(ctx).setStatus(ctx.principal, ctx.pubsub, id, status);
  }

  /** Live provider status: every change after the subscription starts, read fresh from the database. */
  @Subscription(() => Provider, {
    description: 'Live provider status: each change of a provider (or of the one given).',
    subscribe: ({ args, context }) => providerChanges(context as SubgraphContext, (args as { id?: string | null }).id ?? null),
  })
  providerStatusChanged(@Root() provider: Provider, @Arg('id', () => ID, { nullable: true }) _id: string | null): Provider {
    return provider;
  }
}

async function* providerChanges(ctx: SubgraphContext, only: string | null): AsyncGenerator<Provider> {
  for await (const event of ctx.pubsub.subscribe(PROVIDER_STATUS_TOPIC)) {
    const { id } = event as { id: string };
    if (only && id !== only) continue;
    // A fresh fork per event: the subscription's context lives as long as the subscription.
    const provider = await new ProviderService(ctx.em.fork()).find(id);
    if (provider) yield provider;
  }
}
