import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMarketplaceSubgraph } from '../../../subgraphs/marketplace/index.js';
import type { Subgraph } from '../../../subgraphs/shared/subgraph.js';
import { createTestDatabase } from '../../support/database.js';
import { principalFor, run, TEST_SECRET } from '../../support/subgraph-harness.js';

let subgraph: Subgraph;
let db: { url: string; drop(): Promise<void> };
let sql: pg.Client;
const statements: string[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  subgraph = await createMarketplaceSubgraph({ databaseUrl: db.url, internalSecret: TEST_SECRET, onQuery: (text) => statements.push(text) });
  sql = new pg.Client({ connectionString: db.url });
  await sql.connect();
});

afterAll(async () => {
  await sql?.end();
  await subgraph?.orm.close(true);
  await db?.drop();
});

const admin = principalFor('ops', 'admin');

async function approvedVendor() {
  const principal = principalFor();
  const registered = await run<{ registerVendor: { id: string } }>(subgraph, principal, 'mutation { registerVendor(name: "V", country: "DE", registrationNumber: "1", contactEmail: "v@x.example") { id } }');
  const id = registered.data!.registerVendor.id;
  const qualified = await run(subgraph, admin, 'mutation($id: ID!) { qualifyVendor(id: $id, status: APPROVED) { status } }', { id });
  expect(qualified.errors).toBeUndefined();
  return { principal, id };
}

async function tenderEndingIn(buyer: ReturnType<typeof principalFor>, ms: number): Promise<{ id: string; end: number }> {
  const end = Date.now() + ms;
  const created = await run<{ createTender: { id: string } }>(
    subgraph,
    buyer,
    'mutation($end: DateTimeISO!) { createTender(title: "T", description: "d", value: { amount: 100000, currency: "EUR" }, tenderPeriod: { endDate: $end }, publish: true) { id } }'.replace('DateTimeISO', 'DateTime'),
    { end: new Date(end).toISOString() },
  );
  expect(created.errors).toBeUndefined();
  return { id: created.data!.createTender.id, end };
}

describe('bids in the marketplace subgraph', () => {
  it('seals bids in the service: the buyer gets bids_sealed, and no reference (_entities) or lookup reveals a bid', async () => {
    const buyer = principalFor();
    const seller = await approvedVendor();
    const { id: tenderId } = await tenderEndingIn(buyer, 60_000);
    const placed = await run<{ placeBid: { bid: { id: string } } }>(subgraph, seller.principal, 'mutation($id: ID!) { placeBid(id: $id, amount: 99, currency: "EUR") { bid { id } } }', { id: tenderId });
    const bidId = placed.data!.placeBid.bid.id;
    const list = await run(subgraph, buyer, 'query($id: ID!) { tenderBids(id: $id) { data { id } } }', { id: tenderId });
    expect(list.errors?.[0].extensions).toMatchObject({ code: 'FORBIDDEN', reason: 'bids_sealed' });
    expect((await run(subgraph, buyer, 'query($id: ID!) { bid(id: $id) { id } }', { id: bidId })).data).toEqual({ bid: null });
    const entities = await run(subgraph, buyer, 'query($r: [_Any!]!) { _entities(representations: $r) { ... on Bid { id vendorId value { amount } } } }', { r: [{ __typename: 'Bid', id: bidId }] });
    expect(entities.data).toEqual({ _entities: [null] });
    const own = await run(subgraph, seller.principal, 'query($r: [_Any!]!) { _entities(representations: $r) { ... on Bid { id value { amount } } } }', { r: [{ __typename: 'Bid', id: bidId }] });
    expect(own.data).toEqual({ _entities: [{ id: bidId, value: { amount: 99 } }] });
    const tender = await run(subgraph, buyer, 'query($id: ID!) { tender(id: $id) { bidCount awards { id } } }', { id: tenderId });
    expect(tender.data).toEqual({ tender: { bidCount: 1, awards: [] } });
  });

  it('reads a page of bids with their receipts in a fixed number of statements, whatever the page size', async () => {
    const buyer = principalFor();
    // The vendors first: only the twelve bids need to fit before the tender ends.
    const vendors = await Promise.all(Array.from({ length: 12 }, () => approvedVendor()));
    const { id: tenderId, end } = await tenderEndingIn(buyer, 4000);
    for (const [i, v] of vendors.entries()) {
      const placed = await run(subgraph, v.principal, 'mutation($id: ID!, $a: Float!) { placeBid(id: $id, amount: $a, currency: "EUR") { bid { id } } }', { id: tenderId, a: 100 + i });
      expect(placed.errors).toBeUndefined();
    }
    // Until just past the tender's end, however long the bids took.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, end - Date.now()) + 100));
    const query = 'query($id: ID!, $n: Int) { tenderBids(id: $id, limit: $n) { data { id vendorId value { amount } receipts { sha256 version } } } }';
    // The first read settles the tender; count the reads after it.
    await run(subgraph, buyer, query, { id: tenderId, n: 1 });
    const countFor = async (n: number) => {
      statements.length = 0;
      const result = await run<{ tenderBids: { data: { receipts: unknown[] }[] } }>(subgraph, buyer, query, { id: tenderId, n });
      expect(result.errors).toBeUndefined();
      expect(result.data!.tenderBids.data).toHaveLength(n);
      expect(result.data!.tenderBids.data.every((b) => b.receipts.length === 1)).toBe(true);
      return statements.length;
    };
    const few = await countFor(2);
    const many = await countFor(12);
    expect(many).toBe(few);
    expect(many).toBeLessThanOrEqual(4);
  });
});
