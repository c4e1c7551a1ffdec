import DataLoader from 'dataloader';
import { Args, Ctx, FieldResolver, Mutation, Query, Resolver, Root } from '../../shared/type-graphql.js';
import { loaderFor, type SubgraphContext } from '../../shared/context.js';
import { ChatWebhookAttempt } from './chat-webhook-attempt.entity.js';
import { ChatWebhookDeliveryPage } from './chat-webhook-delivery-page.js';
import { ChatWebhookDelivery } from './chat-webhook-delivery.entity.js';
import { ChatWebhookPage } from './chat-webhook-page.js';
import { ChatWebhookDeliveriesArgs, ChatWebhooksArgs, CreateChatWebhookArgs } from './chat-webhook.inputs.js';
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
