import { readFileSync } from 'node:fs';
import { Supergraph } from '@apollo/federation-internals';
import { getNamedType, isLeafType, isNonNullType, isObjectType, type GraphQLObjectType } from 'graphql';
import { createClient, type Client } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { WEBHOOK_EVENT_TYPES } from '../../../subgraphs/membership/webhook/webhook-event-type.js';
import { startTestPlatform, type TestPlatform } from '../../support/platform-harness.js';
import { body, expectError, tenderKit, type Party, type TenderBody } from './tenders-support.js';

// Bids are sealed, their number too: until the tender period ends nobody but the buyer learns
// anything about the bids (how many, whether any), by any route. Each route a client has is
// walked as a competing vendor (one that bids itself) and as an outsider, before and after other
// vendors bid and withdraw: what they see must not change at all.

let platform: TestPlatform;
const kit = tenderKit(() => platform);
const { api, graphql, party, vendor, tender, placed, pastDeadline } = kit;
const clients: Client[] = [];

beforeAll(async () => {
  platform = await startTestPlatform();
});

afterAll(async () => {
  for (const client of clients) await client.dispose();
  await platform?.close();
});

type Json = Record<string, any>;

// The API schema clients see (the committed supergraph's), so a field added to Tender is walked too.
const apiSchema = Supergraph.build(readFileSync(new URL('../../../schema/supergraph.graphql', import.meta.url), 'utf8')).apiSchema().toGraphQLJSSchema();

/** Every field of `typeName` a client can select without arguments, objects `depth` levels down. */
function selectionOf(typeName: string, depth: number): string {
  const type = apiSchema.getType(typeName) as GraphQLObjectType;
  const parts: string[] = [];
  for (const field of Object.values(type.getFields())) {
    if (field.args.some((arg) => isNonNullType(arg.type))) continue;
    const named = getNamedType(field.type);
    if (isObjectType(named)) {
      if (depth > 0) parts.push(`${field.name} { ${selectionOf(named.name, depth - 1)} }`);
    } else if (isLeafType(named)) parts.push(field.name);
  }
  return parts.join(' ');
}

/** Everything `observer` can read about tender `id` and its bids, through every route it has. */
async function view(observer: Party, id: string) {
  const tenderFields = selectionOf('Tender', 1);
  const one = await graphql<Json>(observer.key, `query($id: ID!) { tender(id: $id) { ${tenderFields} } }`, { id });
  const listed = await graphql<Json>(observer.key, `query { tenders(limit: 100) { data { ${tenderFields} } } }`);
  const bids = await graphql<Json>(observer.key, 'query($id: ID!) { tenderBids(id: $id, limit: 100) { data { id } hasMore } }', { id });
  const restList = await body<{ data: TenderBody[] }>(await api('/tenders?limit=100', observer.key), 200);
  return {
    rest: await body<TenderBody>(await api(`/tenders/${id}`, observer.key), 200),
    restListed: restList.data.find((t) => t.id === id),
    restBids: await body<Json>(await api(`/tenders/${id}/bids?limit=100`, observer.key), 200),
    graphql: one,
    graphqlListed: { ...listed, data: { tenders: listed.data?.tenders.data.find((t: Json) => t.id === id) } },
    graphqlBids: bids,
  };
}

/** The first answer of the tenderBidCount subscription (or its refusal). */
async function subscribeOnce(key: string, tenderId: string): Promise<Json> {
  const client = createClient({ url: platform.graphqlUrl.replace(/^http/, 'ws'), webSocketImpl: WebSocket, connectionParams: { authorization: `Bearer ${key}` }, retryAttempts: 0 });
  clients.push(client);
  const iterator = client.iterate({ query: 'subscription($id: ID!) { tenderBidCount(tenderId: $id) { tenderId count } }', variables: { id: tenderId } });
  try {
    const first = await iterator.next();
    return first.value as Json;
  } catch (errors) {
    return { errors };
  } finally {
    await iterator.return?.();
  }
}

describe('sealed bid counts', () => {
  let buyer: Party;
  let sellerA: Party;
  let competitor: Party;
  let outsider: Party;

  beforeAll(async () => {
    buyer = await party();
    sellerA = await vendor();
    competitor = await vendor();
    outsider = await party();
  });

  it('while the tender is open, a competing vendor and an outsider read the same tender whatever is bid, with bidCount null; the buyer reads the count', async () => {
    const t = await tender(buyer.key);
    const before = { competitor: await view(competitor, t.id), outsider: await view(outsider, t.id) };
    for (const seen of Object.values(before)) {
      expect(seen.rest.bidCount).toBeNull();
      expect(seen.restListed).toEqual(seen.rest);
      expect(seen.graphql.data!.tender).toMatchObject({ id: t.id, status: 'ACTIVE', bidCount: null, awards: [], isBuyer: false });
      expect(seen.graphqlListed.data.tenders).toEqual(seen.graphql.data!.tender);
      expect(seen.restBids).toEqual({ data: [], hasMore: false, nextCursor: null });
      expect(seen.graphqlBids).toEqual({ data: { tenderBids: { data: [], hasMore: false } } });
    }
    const count = async () => (await body<TenderBody>(await api(`/tenders/${t.id}`, buyer.key), 200)).bidCount;
    expect(await count()).toBe(0);

    const a = await placed(sellerA.key, t.id, { amount: 640 });
    expect(await count()).toBe(1);
    expect(await view(outsider, t.id)).toEqual(before.outsider);
    expect(await view(competitor, t.id)).toEqual(before.competitor);

    // The competitor bids too: it reads its own bid, and still nothing of the other.
    const own = await placed(competitor.key, t.id, { amount: 655 });
    expect(await count()).toBe(2);
    const competitorNow = await view(competitor, t.id);
    expect(competitorNow.restBids.data.map((b: Json) => b.id)).toEqual([own.bid.id]);
    expect(competitorNow.graphqlBids.data!.tenderBids.data).toEqual([{ id: own.bid.id }]);
    const { restBids: _ownBids, graphqlBids: _ownBidsOverGraphql, ...competitorTender } = competitorNow;
    const { restBids: _noBids, graphqlBids: _noBidsOverGraphql, ...competitorBefore } = before.competitor;
    expect(competitorTender).toEqual(competitorBefore);
    expect(await view(outsider, t.id)).toEqual(before.outsider);

    await body(await api(`/bids/${a.bid.id}/withdraw`, sellerA.key, { method: 'POST' }), 200);
    expect(await count()).toBe(1);
    expect(await view(outsider, t.id)).toEqual(before.outsider);

    // The other vendor's bid and receipt, by id: not found, as if they did not exist.
    for (const observer of [competitor, outsider]) {
      await expectError(await api(`/bids/${a.bid.id}`, observer.key), 404, 'bid_not_found');
      await expectError(await api(`/bid-receipts/${a.receipt.id}`, observer.key), 404, 'bid_receipt_not_found');
      const byId = await graphql<Json>(observer.key, 'query($id: ID!, $r: ID!) { bid(id: $id) { id } bidReceipt(id: $r) { valid } }', { id: a.bid.id, r: a.receipt.id });
      expect(byId).toEqual({ data: { bid: null, bidReceipt: null } });
    }
  });

  it('refuses the tenderBidCount subscription to anyone but the buyer', async () => {
    const t = await tender(buyer.key);
    await placed(sellerA.key, t.id, { amount: 500 });
    for (const observer of [competitor, outsider]) {
      const answer = await subscribeOnce(observer.key, t.id);
      expect(JSON.stringify(answer)).not.toContain('"count"');
      const errors = (answer.errors ?? []) as { extensions?: Json }[];
      expect(errors[0]?.extensions).toMatchObject({ code: 'FORBIDDEN', reason: 'not_tender_buyer' });
    }
    expect(await subscribeOnce(buyer.key, t.id)).toEqual({ data: { tenderBidCount: { tenderId: t.id, count: 1 } } });
  });

  it('publishes no webhook event about bids (a subscriber of any account could otherwise count them)', () => {
    expect(WEBHOOK_EVENT_TYPES.filter((type) => /bid/i.test(type))).toEqual([]);
  });

  it('shows the count to everyone who sees the tender once its period is over', async () => {
    const t = await tender(buyer.key, { endInMs: 2500 });
    await placed(sellerA.key, t.id, { amount: 500 });
    await placed(competitor.key, t.id, { amount: 520 });
    expect((await body<TenderBody>(await api(`/tenders/${t.id}`, outsider.key), 200)).bidCount).toBeNull();
    await pastDeadline(t);
    for (const observer of [buyer, competitor, outsider]) {
      expect(await body<TenderBody>(await api(`/tenders/${t.id}`, observer.key), 200)).toMatchObject({ status: 'EVALUATION', bidCount: 2 });
    }
  });

  it('keeps the count sealed on a tender cancelled before its deadline', async () => {
    const t = await tender(buyer.key);
    await placed(sellerA.key, t.id, { amount: 500 });
    await body(await api(`/tenders/${t.id}/cancel`, buyer.key, { method: 'POST', json: { reason: 'Budget withdrawn' } }), 200);
    for (const observer of [competitor, outsider]) {
      expect(await body<TenderBody>(await api(`/tenders/${t.id}`, observer.key), 200)).toMatchObject({ status: 'CANCELLED', bidCount: null });
    }
    expect((await body<TenderBody>(await api(`/tenders/${t.id}`, buyer.key), 200)).bidCount).toBe(1);
  });
});
