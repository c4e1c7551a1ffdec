import { createClient, type Client } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startTestPlatform, type TestPlatform } from '../../support/platform-harness.js';
import { until } from '../../support/subscription-probe.js';
import { body, tenderKit } from './tenders-support.js';

let platform: TestPlatform;
const kit = tenderKit(() => platform);
const clients: Client[] = [];

beforeAll(async () => {
  platform = await startTestPlatform();
});

afterAll(async () => {
  for (const client of clients) await client.dispose();
  await platform?.close();
});

function wsClient(key: string): Client {
  const client = createClient({
    url: platform.graphqlUrl.replace(/^http/, 'ws'),
    webSocketImpl: WebSocket,
    connectionParams: { authorization: `Bearer ${key}` },
    retryAttempts: 0,
  });
  clients.push(client);
  return client;
}

type CountEvent = { data?: { tenderBidCount: Record<string, unknown> }; errors?: { extensions?: Record<string, unknown> }[] };

function collect(client: Client, tenderId: string) {
  const results: CountEvent[] = [];
  const iterator = client.iterate<CountEvent['data']>({ query: 'subscription($id: ID!) { tenderBidCount(tenderId: $id) { tenderId count } }', variables: { id: tenderId } });
  let failure: unknown;
  const done = (async () => {
    try {
      for await (const result of iterator) results.push(result as CountEvent);
    } catch (error) {
      failure = error;
    }
  })();
  return { results, stop: () => iterator.return?.(), done, failure: () => failure };
}

describe('tenderBidCount over graphql-ws through the gateway', () => {
  it('gives the buyer the current count, then one count per bid placed or withdrawn, and never an amount', async () => {
    const buyer = await kit.party();
    const [a, b] = [await kit.vendor(), await kit.vendor()];
    const t = await kit.tender(buyer.key);
    await kit.placed(a.key, t.id, { amount: 111 });
    const sub = collect(wsClient(buyer.key), t.id);
    // The current count arrives once the subscription listens end to end.
    await until(() => sub.results.length >= 1, 'the initial count');
    expect(sub.results[0]).toEqual({ data: { tenderBidCount: { tenderId: t.id, count: 1 } } });
    const placed = await kit.placed(b.key, t.id, { amount: 222 });
    await until(() => sub.results.length >= 2, 'the count after a bid');
    await body(await kit.api(`/bids/${placed.bid.id}/withdraw`, b.key, { method: 'POST' }), 200);
    await until(() => sub.results.length >= 3, 'the count after a withdrawal');
    expect(sub.results.map((r) => r.data?.tenderBidCount.count)).toEqual([1, 2, 1]);
    expect(JSON.stringify(sub.results)).not.toMatch(/111|222|amount|vendor/);
    await sub.stop();
  });

  it('refuses anyone but the buyer (403 not_tender_buyer), and a test key of the buyer’s account does not see the tender', async () => {
    const buyer = await kit.party();
    const t = await kit.tender(buyer.key);
    const vendor = await kit.vendor();
    const other = collect(wsClient(vendor.key), t.id);
    await other.done;
    expect(other.results[0]?.errors?.[0]?.extensions ?? (other.failure() as { [0]?: { extensions?: unknown } })?.[0]?.extensions).toMatchObject({ code: 'FORBIDDEN', reason: 'not_tender_buyer' });
    const testKey = await kit.party('test', buyer.account);
    const sandbox = collect(wsClient(testKey.key), t.id);
    await sandbox.done;
    expect(sandbox.results[0]?.errors?.[0]?.extensions ?? (sandbox.failure() as { [0]?: { extensions?: unknown } })?.[0]?.extensions).toMatchObject({ code: 'NOT_FOUND', reason: 'tender_not_found' });
  });
});
