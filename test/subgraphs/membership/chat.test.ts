import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChatMessageRevision } from '../../../subgraphs/membership/chat/chat-message-revision.entity.js';
import type { Subgraph } from '../../../subgraphs/shared/subgraph.js';
import { startMembershipSubgraph, type MembershipTestbed } from '../../support/membership-subgraph.js';
import { principalFor, run } from '../../support/subgraph-harness.js';
import { CREATE_CHANNEL, firstError, MESSAGE_FIELDS, newChannel, newMember, ok, send, SEND, type MessageView } from './chat-support.js';

let subgraph: Subgraph;
let testbed: MembershipTestbed;

beforeAll(async () => {
  ({ subgraph } = testbed = await startMembershipSubgraph());
});

afterAll(async () => {
  await testbed?.close();
});

const CHANNELS = `query($asMember: ID!, $limit: Int, $after: String) {
  chatChannels(asMember: $asMember, limit: $limit, after: $after) { data { id name visibility } hasMore nextCursor }
}`;
const CHANNEL = 'query($asMember: ID!, $id: ID!) { chatChannel(asMember: $asMember, id: $id) { id name } }';
const JOIN = 'mutation($asMember: ID!, $channelId: ID!, $memberId: ID) { joinChatChannel(asMember: $asMember, channelId: $channelId, memberId: $memberId) { id } }';
const LEAVE = 'mutation($asMember: ID!, $channelId: ID!) { leaveChatChannel(asMember: $asMember, channelId: $channelId) { id } }';
const MESSAGES = `query($asMember: ID!, $channelId: ID, $withMember: ID, $broadcasts: Boolean, $limit: Int, $after: String) {
  chatMessages(asMember: $asMember, channelId: $channelId, withMember: $withMember, broadcasts: $broadcasts, limit: $limit, after: $after) {
    data { ${MESSAGE_FIELDS} } hasMore nextCursor
  }
}`;
const EDIT = `mutation($asMember: ID!, $id: ID!, $text: String!) { editChatMessage(asMember: $asMember, id: $id, text: $text) { ${MESSAGE_FIELDS} } }`;
const DELETE = `mutation($asMember: ID!, $id: ID!) { deleteChatMessage(asMember: $asMember, id: $id) { ${MESSAGE_FIELDS} } }`;

interface Page<T> {
  data: T[];
  hasMore: boolean;
  nextCursor: string | null;
}

/** An account with three members: a and b in every channel made by `channels`, c outside. */
async function account() {
  const principal = principalFor();
  const [a, b, c] = [await newMember(subgraph, principal), await newMember(subgraph, principal), await newMember(subgraph, principal)];
  return { principal, a, b, c };
}

describe('chat channels', () => {
  it('lists public channels to every member and private ones only to their members', async () => {
    const { principal, a, b, c } = await account();
    const open = await newChannel(subgraph, principal, a, 'general');
    const secret = await newChannel(subgraph, principal, a, 'board', { private: true, memberIds: [b] });
    const names = async (asMember: string) =>
      ok(await run<{ chatChannels: Page<{ name: string }> }>(subgraph, principal, CHANNELS, { asMember })).chatChannels.data.map((ch) => ch.name);
    expect(await names(a)).toEqual(['board', 'general']);
    expect(await names(b)).toEqual(['board', 'general']);
    expect(await names(c)).toEqual(['general']);
    expect(ok(await run(subgraph, principal, CHANNEL, { asMember: c, id: secret }))).toEqual({ chatChannel: null });
    expect(ok(await run(subgraph, principal, CHANNEL, { asMember: c, id: open }))).toEqual({ chatChannel: { id: open, name: 'general' } });
    // Another account sees neither.
    const other = principalFor();
    const stranger = await newMember(subgraph, other);
    expect(ok(await run<{ chatChannels: Page<unknown> }>(subgraph, other, CHANNELS, { asMember: stranger })).chatChannels.data).toEqual([]);
  });

  it('pages channels newest first with a cursor', async () => {
    const { principal, a } = await account();
    for (let i = 0; i < 5; i++) await newChannel(subgraph, principal, a, `room-${i}`);
    const first = ok(await run<{ chatChannels: Page<{ name: string }> }>(subgraph, principal, CHANNELS, { asMember: a, limit: 3 })).chatChannels;
    expect(first.data.map((ch) => ch.name)).toEqual(['room-4', 'room-3', 'room-2']);
    expect(first.hasMore).toBe(true);
    const second = ok(await run<{ chatChannels: Page<{ name: string }> }>(subgraph, principal, CHANNELS, { asMember: a, limit: 3, after: first.nextCursor })).chatChannels;
    expect(second.data.map((ch) => ch.name)).toEqual(['room-1', 'room-0']);
    expect(second.hasMore).toBe(false);
  });

  it('refuses a taken name, a malformed name and an unknown acting member', async () => {
    const { principal, a } = await account();
    await newChannel(subgraph, principal, a, 'dup');
    expect(firstError(await run(subgraph, principal, CREATE_CHANNEL, { asMember: a, name: 'dup' })).extensions).toMatchObject({
      code: 'CONFLICT',
      reason: 'channel_name_taken',
    });
    expect(firstError(await run(subgraph, principal, CREATE_CHANNEL, { asMember: a, name: 'Not OK' })).extensions).toMatchObject({
      code: 'BAD_USER_INPUT',
      param: 'name',
    });
    const unknown = '00000000-0000-4000-8000-ffffffffffff';
    expect(firstError(await run(subgraph, principal, CREATE_CHANNEL, { asMember: unknown, name: 'x' })).extensions).toMatchObject({
      code: 'BAD_USER_INPUT',
      reason: 'unknown_member',
      param: 'asMember',
    });
    // A member of another account, or of the test mode, is not a member here.
    const other = await newMember(subgraph, principalFor());
    expect(firstError(await run(subgraph, principal, CHANNELS, { asMember: other })).extensions).toMatchObject({ reason: 'unknown_member' });
  });

  it('lets members join public channels, and only channel members add others to private ones', async () => {
    const { principal, a, b, c } = await account();
    const open = await newChannel(subgraph, principal, a, 'open');
    const secret = await newChannel(subgraph, principal, a, 'secret', { private: true });
    ok(await run(subgraph, principal, JOIN, { asMember: c, channelId: open }));
    ok(await run(subgraph, principal, JOIN, { asMember: c, channelId: open })); // twice is once
    expect(firstError(await run(subgraph, principal, JOIN, { asMember: c, channelId: secret })).extensions).toMatchObject({
      code: 'NOT_FOUND',
      reason: 'channel_not_found',
    });
    // c is in `open` but b is not: b cannot add c anywhere it does not belong.
    expect(firstError(await run(subgraph, principal, JOIN, { asMember: b, channelId: open, memberId: c })).extensions).toMatchObject({
      code: 'FORBIDDEN',
      reason: 'not_channel_member',
    });
    ok(await run(subgraph, principal, JOIN, { asMember: a, channelId: secret, memberId: c }));
    expect(ok(await run(subgraph, principal, CHANNEL, { asMember: c, id: secret }))).toEqual({ chatChannel: { id: secret, name: 'secret' } });
    ok(await run(subgraph, principal, LEAVE, { asMember: c, channelId: secret }));
    expect(ok(await run(subgraph, principal, CHANNEL, { asMember: c, id: secret }))).toEqual({ chatChannel: null });
    ok(await run(subgraph, principal, LEAVE, { asMember: c, channelId: open }));
    expect(firstError(await run(subgraph, principal, LEAVE, { asMember: c, channelId: open })).extensions).toMatchObject({
      code: 'FORBIDDEN',
      reason: 'not_channel_member',
    });
  });
});

describe('sending', () => {
  it('sends direct, channel and broadcast messages with their sender, recipient and channel', async () => {
    const { principal, a, b } = await account();
    const channelId = await newChannel(subgraph, principal, a, 'team', { memberIds: [b] });
    const direct = await send(subgraph, principal, { asMember: a, mode: 'DIRECT', to: b, text: 'hi b' });
    expect(direct).toMatchObject({ mode: 'DIRECT', text: 'hi b', sender: { id: a }, recipient: { id: b }, channel: null, livemode: true, revisions: [] });
    const inChannel = await send(subgraph, principal, { asMember: b, mode: 'CHANNEL', channelId, text: 'hello team' });
    expect(inChannel).toMatchObject({ mode: 'CHANNEL', sender: { id: b }, recipient: null, channel: { id: channelId, name: 'team' } });
    const broadcast = await send(subgraph, principal, { asMember: a, mode: 'BROADCAST', text: 'AGM on Friday' });
    expect(broadcast).toMatchObject({ mode: 'BROADCAST', recipient: null, channel: null });
  });

  it('refuses unknown recipients, channels one is not in, missing targets and over-long text, with codes', async () => {
    const { principal, a, b, c } = await account();
    const open = await newChannel(subgraph, principal, a, 'open', { memberIds: [b] });
    const secret = await newChannel(subgraph, principal, a, 'secret', { private: true });
    const unknown = '00000000-0000-4000-8000-ffffffffffff';
    const refused = async (vars: Record<string, unknown>) => firstError(await run(subgraph, principal, SEND, vars)).extensions;
    expect(await refused({ asMember: a, mode: 'DIRECT', to: unknown, text: 'x' })).toMatchObject({ code: 'BAD_USER_INPUT', reason: 'unknown_recipient', param: 'to' });
    const elsewhere = await newMember(subgraph, principalFor());
    expect(await refused({ asMember: a, mode: 'DIRECT', to: elsewhere, text: 'x' })).toMatchObject({ reason: 'unknown_recipient' });
    expect(await refused({ asMember: c, mode: 'CHANNEL', channelId: open, text: 'x' })).toMatchObject({ code: 'FORBIDDEN', reason: 'not_channel_member' });
    expect(await refused({ asMember: c, mode: 'CHANNEL', channelId: secret, text: 'x' })).toMatchObject({ code: 'NOT_FOUND', reason: 'channel_not_found' });
    expect(await refused({ asMember: a, mode: 'CHANNEL', channelId: unknown, text: 'x' })).toMatchObject({ reason: 'channel_not_found' });
    expect(await refused({ asMember: a, mode: 'DIRECT', text: 'x' })).toMatchObject({ code: 'BAD_USER_INPUT', param: 'to' });
    expect(await refused({ asMember: a, mode: 'CHANNEL', text: 'x' })).toMatchObject({ code: 'BAD_USER_INPUT', param: 'channelId' });
    expect(await refused({ asMember: a, mode: 'BROADCAST', to: b, text: 'x' })).toMatchObject({ code: 'BAD_USER_INPUT', param: 'to' });
    expect(await refused({ asMember: a, mode: 'BROADCAST', text: 'x'.repeat(4001) })).toMatchObject({ reason: 'message_too_long', param: 'text' });
    expect(await refused({ asMember: a, mode: 'BROADCAST', text: '  \n ' })).toMatchObject({ reason: 'message_empty', param: 'text' });
    expect((await send(subgraph, principal, { asMember: a, mode: 'BROADCAST', text: 'x'.repeat(4000) })).text).toHaveLength(4000);
  });

  it('gives concurrent sends to one channel strictly increasing times', async () => {
    const { principal, a, b } = await account();
    const channelId = await newChannel(subgraph, principal, a, 'busy', { memberIds: [b] });
    const sent = await Promise.all(
      Array.from({ length: 20 }, (_, i) => send(subgraph, principal, { asMember: i % 2 ? a : b, mode: 'CHANNEL', channelId, text: `m${i}` })),
    );
    const times = sent.map((m) => Date.parse(m.createdAt)).sort((x, y) => x - y);
    expect(new Set(times).size).toBe(20);
  });
});

describe('reading messages', () => {
  it("pages a channel's messages newest first", async () => {
    const { principal, a, b } = await account();
    const channelId = await newChannel(subgraph, principal, a, 'history', { memberIds: [b] });
    for (let i = 0; i < 5; i++) await send(subgraph, principal, { asMember: i % 2 ? b : a, mode: 'CHANNEL', channelId, text: `m${i}` });
    const page = async (after?: string | null) =>
      ok(await run<{ chatMessages: Page<MessageView> }>(subgraph, principal, MESSAGES, { asMember: a, channelId, limit: 2, after })).chatMessages;
    const texts: string[] = [];
    let cursor: string | null | undefined;
    do {
      const p = await page(cursor);
      texts.push(...p.data.map((m) => m.text!));
      cursor = p.nextCursor;
    } while (cursor);
    expect(texts).toEqual(['m4', 'm3', 'm2', 'm1', 'm0']);
  });

  it('shows a direct conversation to its two members only, from either side', async () => {
    const { principal, a, b, c } = await account();
    await send(subgraph, principal, { asMember: a, mode: 'DIRECT', to: b, text: 'one' });
    await send(subgraph, principal, { asMember: b, mode: 'DIRECT', to: a, text: 'two' });
    await send(subgraph, principal, { asMember: a, mode: 'DIRECT', to: c, text: 'to c' });
    const texts = async (asMember: string, withMember: string) =>
      ok(await run<{ chatMessages: Page<MessageView> }>(subgraph, principal, MESSAGES, { asMember, withMember })).chatMessages.data.map((m) => m.text);
    expect(await texts(a, b)).toEqual(['two', 'one']);
    expect(await texts(b, a)).toEqual(['two', 'one']);
    expect(await texts(c, b)).toEqual([]);
    expect(await texts(c, a)).toEqual(['to c']);
  });

  it("hides a private channel's messages from non-members and shows broadcasts to all", async () => {
    const { principal, a, b, c } = await account();
    const secret = await newChannel(subgraph, principal, a, 'secret', { private: true, memberIds: [b] });
    await send(subgraph, principal, { asMember: a, mode: 'CHANNEL', channelId: secret, text: 'hush' });
    await send(subgraph, principal, { asMember: a, mode: 'BROADCAST', text: 'hear ye' });
    expect(firstError(await run(subgraph, principal, MESSAGES, { asMember: c, channelId: secret })).extensions).toMatchObject({ reason: 'channel_not_found' });
    const broadcasts = ok(await run<{ chatMessages: Page<MessageView> }>(subgraph, principal, MESSAGES, { asMember: c, broadcasts: true })).chatMessages;
    expect(broadcasts.data.map((m) => m.text)).toEqual(['hear ye']);
    expect(firstError(await run(subgraph, principal, MESSAGES, { asMember: c })).extensions).toMatchObject({ code: 'BAD_USER_INPUT' });
    expect(firstError(await run(subgraph, principal, MESSAGES, { asMember: c, withMember: a, channelId: secret })).extensions).toMatchObject({ code: 'BAD_USER_INPUT' });
  });
});

describe('edits and deletes', () => {
  it('keeps each earlier text as a revision, lets only the sender change a message, and withholds deleted text', async () => {
    const { principal, a, b } = await account();
    const message = await send(subgraph, principal, { asMember: a, mode: 'DIRECT', to: b, text: 'frist' });
    const edited = ok(await run<{ editChatMessage: MessageView }>(subgraph, principal, EDIT, { asMember: a, id: message.id, text: 'first' })).editChatMessage;
    expect(edited.text).toBe('first');
    expect(edited.editedAt).not.toBeNull();
    expect(edited.revisions.map((r) => [r.action, r.text])).toEqual([['EDIT', 'frist']]);
    expect(firstError(await run(subgraph, principal, EDIT, { asMember: b, id: message.id, text: 'mine now' })).extensions).toMatchObject({
      code: 'FORBIDDEN',
      reason: 'not_message_sender',
    });
    expect(firstError(await run(subgraph, principal, EDIT, { asMember: a, id: '00000000-0000-4000-8000-ffffffffffff', text: 'x' })).extensions).toMatchObject({
      reason: 'message_not_found',
    });
    const deleted = ok(await run<{ deleteChatMessage: MessageView }>(subgraph, principal, DELETE, { asMember: a, id: message.id })).deleteChatMessage;
    expect(deleted).toMatchObject({ text: null, revisions: [] });
    expect(deleted.deletedAt).not.toBeNull();
    expect(firstError(await run(subgraph, principal, EDIT, { asMember: a, id: message.id, text: 'again' })).extensions).toMatchObject({
      code: 'CONFLICT',
      reason: 'message_deleted',
    });
    // The reader sees a tombstone; the trail keeps every text.
    const seen = ok(await run<{ chatMessages: Page<MessageView> }>(subgraph, principal, MESSAGES, { asMember: b, withMember: a })).chatMessages.data;
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ id: message.id, text: null, revisions: [] });
    const trail = await subgraph.orm.em.fork().find(ChatMessageRevision, { messageId: message.id }, { orderBy: { createdAt: 'asc' } });
    expect(trail.map((r) => [r.action, r.text, r.memberId])).toEqual([
      ['edit', 'frist', a],
      ['delete', 'first', a],
    ]);
  });

  it('does not let a member outside a private channel change or see its messages', async () => {
    const { principal, a, c } = await account();
    const secret = await newChannel(subgraph, principal, a, 'secret', { private: true });
    const message = await send(subgraph, principal, { asMember: a, mode: 'CHANNEL', channelId: secret, text: 'hush' });
    expect(firstError(await run(subgraph, principal, DELETE, { asMember: c, id: message.id })).extensions).toMatchObject({ reason: 'message_not_found' });
    const lookup = 'query($asMember: ID!, $id: ID!) { chatMessage(asMember: $asMember, id: $id) { id } }';
    expect(ok(await run(subgraph, principal, lookup, { asMember: c, id: message.id }))).toEqual({ chatMessage: null });
    expect(ok(await run(subgraph, principal, lookup, { asMember: a, id: message.id }))).toEqual({ chatMessage: { id: message.id } });
  });
});
