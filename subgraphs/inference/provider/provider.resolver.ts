import { ADMIN } from '../../shared/authorization.js';
import { Arg, Authorized, Ctx, FieldResolver, ID, Int, Mutation, Query, Resolver, Root, Subscription } from '../../shared/type-graphql.js';
import type { SubgraphContext } from '../../shared/context.js';
import { DateTimeResolver } from '../../shared/scalars.js';
import type { InferenceContext } from '../inference-context.js';
import type { ProviderReport } from '../provider-registry/provider-registry.js';
import { Provider } from './provider.entity.js';
import { PROVIDER_STATUS_TOPIC, ProviderService } from './provider.service.js';
import { ProviderStatus } from './provider-status.js';

const service = (ctx: SubgraphContext) => new ProviderService(ctx.em);

// Read afresh for each field rather than memoised in ctx.loaders: a subscription's context lives
// across all its events, and these numbers must be those of the event's moment. status() only
// reads counters in memory.
const live = (ctx: InferenceContext, provider: Provider): ProviderReport | undefined =>
  ctx.inference.registry.status().find((report) => report.id === provider.id);

@Resolver(() => Provider)
export class ProviderResolver {
  @Query(() => [Provider], { description: 'Every configured provider, ordered by id.' })
  providers(@Ctx() ctx: SubgraphContext): Promise<Provider[]> {
    return service(ctx).list();
  }

  @Query(() => Provider, { nullable: true })
  provider(@Arg('id', () => ID) id: string, @Ctx() ctx: SubgraphContext): Promise<Provider | null> {
    return service(ctx).find(id);
  }

  @Authorized(ADMIN)
  @Mutation(() => Provider, {
    description:
      "Admin: overrides a provider's status, and live status subscribers see it. The override lasts until the health probes next see the provider's status change, which then replaces it.",
  })
  setProviderStatus(
    @Arg('id', () => ID) id: string,
    @Arg('status', () => ProviderStatus) status: ProviderStatus,
    @Ctx() ctx: SubgraphContext,
  ): Promise<Provider> {
    return service(ctx).setStatus(ctx.pubsub, id, status);
  }

  /** Live provider status: every change after the subscription starts, read fresh from the database. */
  @Subscription(() => Provider, {
    description: 'Live provider status: each change of a provider (or of the one given), from the health probes or an admin.',
    subscribe: ({ args, context }) => providerChanges(context as SubgraphContext, (args as { id?: string | null }).id ?? null),
  })
  providerStatusChanged(@Root() provider: Provider, @Arg('id', () => ID, { nullable: true }) _id: string | null): Provider {
    return provider;
  }

  // A provider without a report is one this instance's configuration does not have (rows of
  // another instance's configuration, during a rolling change): nothing is in flight here.
  @FieldResolver(() => Int, { description: 'Requests this instance is serving on the provider now.' })
  inFlight(@Root() provider: Provider, @Ctx() ctx: InferenceContext): number {
    return live(ctx, provider)?.inFlight ?? 0;
  }

  @FieldResolver(() => Int, { nullable: true, description: 'Requests served at once, beyond which more are refused; null when unlimited.' })
  maxConcurrency(@Root() provider: Provider, @Ctx() ctx: InferenceContext): number | null {
    return live(ctx, provider)?.maxConcurrency ?? null;
  }

  @FieldResolver(() => Int, { description: 'Models the provider listed at the last health probe, aliases included.' })
  modelCount(@Root() provider: Provider, @Ctx() ctx: InferenceContext): number {
    return live(ctx, provider)?.models ?? 0;
  }

  @FieldResolver(() => DateTimeResolver, {
    nullable: true,
    description: 'Until when routing tries the provider last after repeated failures; null when it is not cooling down.',
  })
  coolingDownUntil(@Root() provider: Provider, @Ctx() ctx: InferenceContext): Date | null {
    return live(ctx, provider)?.coolingDownUntil ?? null;
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
