import { JSONObjectResolver } from 'graphql-scalars';
import { DomainError } from '../../../core/errors.js';
import { Arg, Ctx, Directive, Mutation, Resolver } from '../../shared/type-graphql.js';
import type { SubgraphContext } from '../../shared/context.js';
import { RELAYED_EVENT_TYPES, type WebhookEventType } from './webhook-event-type.js';
import { enqueueRelayedEvent } from './webhook-outbox.js';

/** The key id the marketplace's relay signs its principal with; nothing else may relay. */
export const WEBHOOK_RELAY_KEY_ID = 'system:marketplace-webhook-relay';

/**
 * The marketplace's events enter the account's webhook outbox here: the endpoints live in this
 * subgraph, and the marketplace cannot write its tables. @inaccessible: the field is in no client's
 * schema; only a principal signed with the internal secret for the relay reaches it.
 */
@Resolver()
export class WebhookRelayResolver {
  @Mutation(() => Boolean, { description: 'Internal: an event the marketplace raised, for the principal’s account and mode.' })
  @Directive('@inaccessible')
  async relayWebhookEvent(
    @Arg('eventId', () => String) eventId: string,
    @Arg('type', () => String) type: string,
    @Arg('timestamp', () => String) timestamp: string,
    @Arg('data', () => JSONObjectResolver) data: Record<string, unknown>,
    @Ctx() ctx: SubgraphContext,
  ): Promise<boolean> {
    if (ctx.principal.keyId !== WEBHOOK_RELAY_KEY_ID) throw new DomainError('FORBIDDEN', 'Only the marketplace relays events', { reason: 'wrong_key_kind' });
    if (!RELAYED_EVENT_TYPES.includes(type as WebhookEventType)) throw new DomainError('BAD_USER_INPUT', `The marketplace relays no "${type}" events`, { param: 'type', reason: 'unknown_event_type' });
    await ctx.em.transactional((em) => enqueueRelayedEvent(em, ctx.principal, type as WebhookEventType, { eventId, timestamp, data }));
    return true;
  }
}
