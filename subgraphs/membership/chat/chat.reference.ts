import { batchedReference } from '../../shared/reference.js';
import { UUID } from '../../shared/pagination.js';
import type { SubgraphContext } from '../../shared/context.js';
import { ChatChannel } from './chat-channel.entity.js';
import { ChatMessage } from './chat-message.entity.js';

async function byIds<T extends { id: string }>(ctx: SubgraphContext, entity: typeof ChatChannel | typeof ChatMessage, ids: readonly string[]) {
  const valid = ids.filter((id) => UUID.test(id));
  const scope = { accountId: ctx.principal.accountId, mode: ctx.principal.mode };
  const rows = valid.length ? ((await ctx.em.find(entity as never, { id: { $in: valid }, ...scope } as never)) as T[]) : [];
  const byId = new Map(rows.map((row) => [row.id, row]));
  return ids.map((id) => byId.get(id) ?? null);
}

/**
 * Channels by id, in one statement per request; scoped to the account and mode only, as the
 * acting member is known to the field that asks, not to the reference.
 */
export const chatChannelReference = batchedReference<ChatChannel>('chatChannel.byId', (ctx, ids) => byIds<ChatChannel>(ctx, ChatChannel, ids));

export const chatMessageReference = batchedReference<ChatMessage>('chatMessage.byId', (ctx, ids) => byIds<ChatMessage>(ctx, ChatMessage, ids));
