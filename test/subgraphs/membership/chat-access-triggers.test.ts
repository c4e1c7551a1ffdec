import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Principal } from '../../../core/principal.js';
import type { Subgraph } from '../../../subgraphs/shared/subgraph.js';
import { startMembershipSubgraph, type MembershipTestbed } from '../../support/membership-subgraph.js';
import { principalFor, run } from '../../support/subgraph-harness.js';
import { newChannel, newMember, ok } from './chat-support.js';

let subgraph: Subgraph;
let testbed: MembershipTestbed;

beforeAll(async () => {
  ({ subgraph } = testbed = await startMembershipSubgraph());
});
afterAll(async () => {
  await testbed?.close();
});

/** A scope's chat access counter: 0 until its first change, which starts it at the clock in microseconds. */
async function counter(principal: Principal, em = subgraph.orm.em.fork()): Promise<number> {
  const rows = await em.execute('select "version"::text as "version" from "membership"."chat_access_version" where "account_id" = ? and "mode" = ?', [principal.accountId, principal.mode]);
  return Number(rows[0]?.version ?? 0);
}

const sql = (statement: string, params: unknown[] = []) => subgraph.orm.em.fork().execute(statement, params, 'run');

it("moves a scope's counter with each change the chat checks read, however written, and only that scope's", async () => {
  const mine = principalFor();
  const theirs = principalFor();
  const counters = async () => [await counter(mine), await counter(theirs)];
  const [a, b, c] = [await newMember(subgraph, mine, 'A'), await newMember(subgraph, mine, 'B'), await newMember(subgraph, mine, 'C')];
  const x = await newMember(subgraph, theirs, 'X');
  // New members are never kept by the checks, so adding them moves nothing.
  expect(await counters()).toEqual([0, 0]);
  const startedAt = Date.now() * 1000;
  const channel = await newChannel(subgraph, mine, a, 'watched', { private: true, memberIds: [b] });
  const afterCreate = await counter(mine);
  // A first change starts the counter above any value it could have had before (a row deleted).
  expect(afterCreate).toBeGreaterThanOrEqual(startedAt - 5_000_000);
  expect(await counter(theirs)).toBe(0);
  // A member's other columns, and a membership's, are not the checks' business.
  ok(await run(subgraph, mine, 'mutation($id: ID!, $n: String) { updateMember(id: $id, name: $n) { id } }', { id: b, n: 'Bea' }));
  await sql('update "membership"."member" set "name" = ? where "id" = ?', ['Bee', b]);
  await sql('update "membership"."chat_channel_member" set "joined_at" = now() where "channel_id" = ?', [channel]);
  expect(await counter(mine)).toBe(afterCreate);
  // Leaving through the API, joining again by plain SQL, archiving both ways: each moves it once.
  ok(await run(subgraph, mine, 'mutation($a: ID!, $c: ID!) { leaveChatChannel(asMember: $a, channelId: $c) { id } }', { a: b, c: channel }));
  expect(await counter(mine)).toBe(afterCreate + 1);
  await sql('insert into "membership"."chat_channel_member" ("id", "channel_id", "member_id", "joined_at") values (gen_random_uuid(), ?, ?, now())', [channel, b]);
  expect(await counter(mine)).toBe(afterCreate + 2);
  await sql('update "membership"."chat_channel_member" set "member_id" = ? where "channel_id" = ? and "member_id" = ?', [c, channel, b]);
  expect(await counter(mine)).toBe(afterCreate + 3);
  await sql('update "membership"."member" set "deleted_at" = now() where "id" = ?', [b]);
  expect(await counter(mine)).toBe(afterCreate + 4);
  ok(await run(subgraph, theirs, 'mutation($id: ID!) { deleteMember(id: $id) { id } }', { id: x }));
  const theirsStarted = await counter(theirs);
  expect(theirsStarted).toBeGreaterThan(0);
  expect(await counter(mine)).toBe(afterCreate + 4);
  // One statement over two scopes moves each once.
  await sql('update "membership"."member" set "deleted_at" = null where "id" in (?, ?)', [b, x]);
  expect(await counters()).toEqual([afterCreate + 5, theirsStarted + 1]);
  await sql('delete from "membership"."member" where "id" = ?', [x]);
  expect(await counters()).toEqual([afterCreate + 5, theirsStarted + 2]);
  // A counter row deleted starts again above its old value at the next change.
  await sql('delete from "membership"."chat_access_version" where "account_id" = ?', [mine.accountId]);
  await sql('update "membership"."member" set "deleted_at" = now() where "id" = ?', [b]);
  expect(await counter(mine)).toBeGreaterThan(afterCreate + 5);
});

it('moves every scope with rows on a truncate, before the rows go', async () => {
  const mine = principalFor();
  const a = await newMember(subgraph, mine, 'T');
  await newChannel(subgraph, mine, a, 'truncated', { private: true });
  const before = await counter(mine);
  await subgraph.orm.em.fork().transactional(async (em) => {
    await em.execute('truncate "membership"."chat_channel_member"');
    expect(await counter(mine, em)).toBe(before + 1);
    await em.execute('truncate "membership"."member" cascade');
    expect(await counter(mine, em)).toBe(before + 2);
    // Taken back: the other tests' rows stay.
    throw new Rollback();
  }).catch((error: unknown) => {
    if (!(error instanceof Rollback)) throw error;
  });
  expect(await counter(mine)).toBe(before);
});

class Rollback extends Error {}
