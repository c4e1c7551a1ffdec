import { DateTimeResolver } from '../../shared/scalars.js';
import { ADMIN } from '../../shared/authorization.js';
import { Arg, Args, Authorized, Ctx, ID, Mutation, Query, Resolver } from '../../shared/type-graphql.js';
import type { KeyStoreContext } from '../../shared/key-store.context.js';
import { CreatedTracerouteKeyType } from './created-traceroute-key.type.js';
import { IssueTracerouteKeyArgs } from './traceroute-key.inputs.js';
import { TracerouteKeyService } from './traceroute-key.service.js';
import { TracerouteKeyType } from './traceroute-key.type.js';

const service = (ctx: KeyStoreContext) => new TracerouteKeyService(ctx.keyStore);

/** The traceroute admin area (admin keys only). */
@Authorized(ADMIN)
@Resolver()
export class TracerouteKeyResolver {
  @Query(() => [TracerouteKeyType], { description: 'Admin: traceroute keys, of one account or all.' })
  tracerouteKeys(
    @Arg('account', () => String, { nullable: true }) account: string | null,
    @Ctx() ctx: KeyStoreContext,
  ): Promise<TracerouteKeyType[]> {
    return service(ctx).list(account);
  }

  @Mutation(() => CreatedTracerouteKeyType, { description: 'Admin: issues a traceroute key; its secret is shown once.' })
  issueTracerouteKey(@Args(() => IssueTracerouteKeyArgs) args: IssueTracerouteKeyArgs, @Ctx() ctx: KeyStoreContext): Promise<CreatedTracerouteKeyType> {
    return service(ctx).issue(args);
  }

  @Mutation(() => TracerouteKeyType, { description: 'Admin: deactivates a key (403 key_disabled from then on).' })
  disableTracerouteKey(@Arg('id', () => ID) id: string, @Ctx() ctx: KeyStoreContext): Promise<TracerouteKeyType> {
    return service(ctx).disable(id);
  }

  @Mutation(() => TracerouteKeyType, { description: 'Admin: re-enables a deactivated key.' })
  enableTracerouteKey(@Arg('id', () => ID) id: string, @Ctx() ctx: KeyStoreContext): Promise<TracerouteKeyType> {
    return service(ctx).enable(id);
  }

  @Mutation(() => TracerouteKeyType, { description: 'Admin: sets the expiry (now by default: 403 key_expired from then on).' })
  expireTracerouteKey(
    @Arg('id', () => ID) id: string,
    @Arg('at', () => DateTimeResolver, { nullable: true }) at: Date | null,
    @Ctx() ctx: KeyStoreContext,
  ): Promise<TracerouteKeyType> {
    return service(ctx).expire(id, at);
  }
}
