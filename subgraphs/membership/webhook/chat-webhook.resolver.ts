import DataLoader from 'dataloader';
import { Arg, Args, Ctx, FieldResolver, ID, Mutation, Query, Resolver, Root } from '../../shared/type-graphql.js';
import { ChatWebhook } from './chat-webhook.entity.js';
import { DeletedChatWebhook } from './deleted-chat-webhook.js';
import { loaderFor, type SubgraphContext } from '../../shared/context.js';
import { ChatWebhookAttempt } from './chat-webhook-attempt.entity.js';
import { ChatWebhookDeliveryPage } from './chat-webhook-delivery-page.js';
import { ChatWebhookDelivery } from './chat-webhook-delivery.entity.js';
import { ChatWebhookPage } from './chat-webhook-page.js';
import { ChatWebhookDeliveriesArgs, ChatWebhooksArgs, CreateChatWebhookArgs, RotateChatWebhookSecretArgs } from './chat-webhook.inputs.js';
import { ChatWebhookService } from './chat-webhook.service.js';
import { CreatedChatWebhook } from './created-chat-webhook.type.js';
import { DEFAULT_WEBHOOK_SETTINGS, type WebhookSettingsContext } from './webhook-settings.js';

type Context = SubgraphContext & WebhookSettingsContext;

const service = (ctx: Context) => new ChatWebhookService(ctx.em, ctx.principal, ctx.webhookSettings ?? DEFAULT_WEBHOOK_SETTINGS, ctx.log);

@Resolver(() => ChatWebhookDelivery)
export class ChatWebhookResolver {
  @Mutation(() => CreatedChatWebhook, { description: 'Registers an endpoint for chat events; returns its signing secret once.' })
  createChatWebhook(@Args(() => CreateChatWebhookArgs) args: CreateChatWebhookArgs, @Ctx() ctx: Context): Promise<CreatedChatWebhook> {
    return service(ctx).create(args);
  }

  @Query(() => ChatWebhook, { nullable: true, description: 'One webhook endpoint of the account.' })
  chatWebhook(@Arg('id', () => ID) id: string, @Ctx() ctx: Context): Promise<ChatWebhook | null> {
    return service(ctx).find(id);
  }

  @Mutation(() => ChatWebhook, { description: 'Stops deliveries to the endpoint until it is enabled again.' })
  disableChatWebhook(@Arg('id', () => ID) id: string, @Ctx() ctx: Context): Promise<ChatWebhook> {
    return service(ctx).disable(id);
  }

  @Mutation(() => ChatWebhook, { description: 'Delivers to the endpoint again (also one the platform disabled), its failure record cleared.' })
  enableChatWebhook(@Arg('id', () => ID) id: string, @Ctx() ctx: Context): Promise<ChatWebhook> {
    return service(ctx).enable(id);
  }

  @Mutation(() => CreatedChatWebhook, { description: 'A new signing secret, shown once; the old one also signs for expireOldAfterHours (24 by default).' })
  rotateChatWebhookSecret(@Args(() => RotateChatWebhookSecretArgs) args: RotateChatWebhookSecretArgs, @Ctx() ctx: Context): Promise<CreatedChatWebhook> {
    return service(ctx).rotateSecret(args.id, args.expireOldAfterHours ?? undefined);
  }

  @Mutation(() => DeletedChatWebhook, { description: 'Removes the endpoint and its delivery log.' })
  deleteChatWebhook(@Arg('id', () => ID) id: string, @Ctx() ctx: Context): Promise<DeletedChatWebhook> {
    return service(ctx).delete(id);
  }

  @Query(() => ChatWebhookPage, { description: "The account's webhook endpoints, newest first." })
  chatWebhooks(@Args(() => ChatWebhooksArgs) args: ChatWebhooksArgs, @Ctx() ctx: Context): Promise<ChatWebhookPage> {
    return service(ctx).list(args);
  }

  @Query(() => ChatWebhookDeliveryPage, { description: "An endpoint's deliveries (its delivery log), newest first." })
  chatWebhookDeliveries(@Args(() => ChatWebhookDeliveriesArgs) args: ChatWebhookDeliveriesArgs, @Ctx() ctx: Context): Promise<ChatWebhookDeliveryPage> {
    return service(ctx).deliveries(args);
  }

  @FieldResolver(() => [ChatWebhookAttempt], { description: 'Every attempt, first to last.' })
  attemptLog(@Root() delivery: ChatWebhookDelivery, @Ctx() ctx: Context): Promise<ChatWebhookAttempt[]> {
    return loaderFor(ctx, 'chatWebhookDelivery.attempts', () => new DataLoader<string, ChatWebhookAttempt[]>((ids) => service(ctx).attemptsOf(ids))).load(delivery.id);
  }
}
