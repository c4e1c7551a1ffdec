import type { ExecutionResult, GraphQLFormattedError } from 'graphql';
import { expect } from 'vitest';
import type { Principal } from '../../../core/principal.js';
import type { Subgraph } from '../../../subgraphs/shared/subgraph.js';
import { Member } from '../../../subgraphs/membership/member/member.entity.js';
import { run } from '../../support/subgraph-harness.js';

/** The data as a client receives it (dates as strings). */
export function ok<T>(result: ExecutionResult<T>): T {
  expect(result.errors).toBeUndefined();
  return JSON.parse(JSON.stringify(result.data)) as T;
}

export function firstError(result: ExecutionResult): GraphQLFormattedError {
  expect(result.errors?.length, 'expected a GraphQL error').toBeGreaterThan(0);
  return result.errors![0];
}

let memberCounter = 0;

/**
 * Stores a member of the principal's account straight through the ORM (chat tests need members,
 * not the members API) and returns its id.
 */
export async function newMember(subgraph: Subgraph, principal: Principal, name = `Member ${++memberCounter}`): Promise<string> {
  const em = subgraph.orm.em.fork();
  const member = em.create(Member, {
    accountId: principal.accountId,
    mode: principal.mode,
    name,
    email: `chat-${process.pid}-${++memberCounter}@example.com`,
    joinedOn: '2026-01-01',
    periodStart: '2026-01-01',
    periodEnd: '2099-12-31',
  } as never);
  await em.flush();
  return (member as Member).id;
}

export const MESSAGE_FIELDS = 'id mode text createdAt editedAt deletedAt livemode sender { id } recipient { id } channel { id name } revisions { action text createdAt }';

export const SEND = `mutation($asMember: ID!, $mode: ChatMessageMode!, $channelId: ID, $to: ID, $text: String!) {
  sendChatMessage(asMember: $asMember, mode: $mode, channelId: $channelId, to: $to, text: $text) { ${MESSAGE_FIELDS} }
}`;

export const CREATE_CHANNEL = `mutation($asMember: ID!, $name: String!, $private: Boolean, $memberIds: [ID!]) {
  createChatChannel(asMember: $asMember, name: $name, private: $private, memberIds: $memberIds) { id name visibility livemode createdBy { id } }
}`;

export interface MessageView {
  id: string;
  mode: 'DIRECT' | 'CHANNEL' | 'BROADCAST';
  text: string | null;
  createdAt: string;
  editedAt: string | null;
  deletedAt: string | null;
  livemode: boolean;
  sender: { id: string };
  recipient: { id: string } | null;
  channel: { id: string; name: string } | null;
  revisions: { action: string; text: string; createdAt: string }[];
}

/** Sends a message and returns it (or the result, when `expectError`). */
export async function send(
  subgraph: Subgraph,
  principal: Principal,
  vars: { asMember: string; mode: string; channelId?: string; to?: string; text: string },
): Promise<MessageView> {
  return ok(await run<{ sendChatMessage: MessageView }>(subgraph, principal, SEND, vars)).sendChatMessage;
}

export async function newChannel(
  subgraph: Subgraph,
  principal: Principal,
  asMember: string,
  name: string,
  options: { private?: boolean; memberIds?: string[] } = {},
): Promise<string> {
  const result = await run<{ createChatChannel: { id: string } }>(subgraph, principal, CREATE_CHANNEL, { asMember, name, ...options });
  return ok(result).createChatChannel.id;
}
