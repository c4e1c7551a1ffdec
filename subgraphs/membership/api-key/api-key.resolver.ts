import { Arg, Ctx, ID, Mutation, Query, Resolver } from '../../shared/type-graphql.js';
import type { KeyStoreContext } from '../../shared/key-store.context.js';
import { ApiKeySettingsService } from './api-key.service.js';
import { ApiKeyType, MembershipKeyKind } from './api-key.type.js';
import { CreatedApiKeyType } from './created-api-key.type.js';

const service = (ctx: KeyStoreContext) => new ApiKeySettingsService(ctx.keyStore, ctx.principal);

@Resolver()
export class ApiKeyResolver {
  @Query(() => [ApiKeyType], { description: "Settings, API Keys: the account's keys." })
  apiKeys(@Ctx() ctx: KeyStoreContext): Promise<ApiKeyType[]> {
    return service(ctx).list();
  }

  @Mutation(() => CreatedApiKeyType)
  createApiKey(
    @Arg('kind', () => MembershipKeyKind) kind: MembershipKeyKind,
    @Arg('name', () => String, { nullable: true }) name: string | null,
    @Ctx() ctx: KeyStoreContext,
  ): Promise<CreatedApiKeyType> {
    return service(ctx).create(kind, name);
  }

  @Mutation(() => ApiKeyType)
  revokeApiKey(@Arg('id', () => ID) id: string, @Ctx() ctx: KeyStoreContext): Promise<ApiKeyType> {
    return service(ctx).revoke(id);
  }
}
