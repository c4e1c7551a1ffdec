import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMarketplaceSubgraph } from '../../../subgraphs/marketplace/index.js';
import type { Subgraph } from '../../../subgraphs/shared/subgraph.js';
import { createTestDatabase } from '../../support/database.js';
import { principalFor, run, TEST_SECRET } from '../../support/subgraph-harness.js';

// Bid references (`_entities` of Bid) are batched like every reference: a page of N costs one
// SQL statement, and the sealed-bid rule is applied in that statement, not by a lookup per bid.

let subgraph: Subgraph;
let db: { url: string; drop(): Promise<void> };
const statements: string[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  subgraph = await createMarketplaceSubgraph({ databaseUrl: db.url, internalSecret: TEST_SECRET, onQuery: (text) => statements.push(text) });
});

afterAll(async () => {
  await subgraph?.orm.close(true);
  await db?.drop();
});

type Principal = ReturnType<typeof principalFor>;
const admin = principalFor('ops', 'admin');

async function approvedVendor(): Promise<Principal> {
  const principal = principalFor();
  const registered = await run<{ registerVendor: { id: string } }>(subgraph, principal, 'mutation { registerVendor(name: "V", country: "DE", registrationNumber: "1", contactEmail: "v@x.example") { id } }');
  const qualified = await run(subgraph, admin, 'mutation($id: ID!) { qualifyVendor(id: $id, status: APPROVED) { status } }', { id: registered.data!.registerVendor.id });
  expect(qualified.errors).toBeUndefined();
  return principal;
}

async function tenderEndingIn(buyer: Principal, ms: number): Promise<{ id: string; end: Date }> {
  const end = new Date(Date.now() + ms);
  const created = await run<{ createTender: { id: string } }>(
    subgraph,
    buyer,
    'mutation($end: DateTime!) { createTender(title: "T", description: "d", value: { amount: 100000, currency: "EUR" }, tenderPeriod: { endDate: $end }, publish: true) { id } }',
    { end: end.toISOString() },
  );
  expect(created.errors).toBeUndefined();
  return { id: created.data!.createTender.id, end };
}

const ENTITIES = 'query($r: [_Any!]!) { _entities(representations: $r) { ... on Bid { id tenderId value { amount } } } }';

/** The bids `principal` gets for `ids` by reference, and the statements that cost. */
async function references(principal: Principal, ids: string[]) {
  statements.length = 0;
  const result = await run<{ _entities: ({ id: string } | null)[] }>(subgraph, principal, ENTITIES, { r: ids.map((id) => ({ __typename: 'Bid', id })) });
  expect(result.errors).toBeUndefined();
  return { seen: result.data!._entities.map((bid) => bid?.id ?? null), statements: statements.length };
}

describe('bid references', () => {
  const bids: { id: string; vendor: Principal }[] = [];
  let buyer: Principal;
  let tender: { id: string; end: Date };
  let outsider: Principal;

  beforeAll(async () => {
    buyer = principalFor();
    outsider = principalFor();
    const vendors = await Promise.all(Array.from({ length: 12 }, () => approvedVendor()));
    tender = await tenderEndingIn(buyer, 5000);
    for (const [i, vendor] of vendors.entries()) {
      const placed = await run<{ placeBid: { bid: { id: string } } }>(subgraph, vendor, 'mutation($id: ID!, $a: Float!) { placeBid(id: $id, amount: $a, currency: "EUR") { bid { id } } }', { id: tender.id, a: 100 + i });
      expect(placed.errors).toBeUndefined();
      bids.push({ id: placed.data!.placeBid.bid.id, vendor });
    }
  });

  const ids = () => bids.map((bid) => bid.id);

  it('while the tender is open: each vendor its own bid, the buyer and an outsider none, in one statement for a page of twelve', async () => {
    const vendorView = await references(bids[3].vendor, ids());
    expect(vendorView.seen).toEqual(ids().map((id, i) => (i === 3 ? id : null)));
    expect(vendorView.statements).toBe(1);
    const own = await run(subgraph, bids[3].vendor, ENTITIES, { r: [{ __typename: 'Bid', id: bids[3].id }] });
    expect(own.data).toEqual({ _entities: [{ id: bids[3].id, tenderId: tender.id, value: { amount: 103 } }] });
    for (const principal of [buyer, outsider]) {
      const view = await references(principal, ids());
      expect(view.seen).toEqual(ids().map(() => null));
      expect(view.statements).toBe(1);
    }
    // The same statement for one reference as for twelve.
    expect((await references(outsider, ids().slice(0, 1))).statements).toBe(1);
  });

  it('keeps Tender.bidCount null for others in the tender reference too', async () => {
    const query = 'query($r: [_Any!]!) { _entities(representations: $r) { ... on Tender { id bidCount } } }';
    const asOutsider = await run(subgraph, outsider, query, { r: [{ __typename: 'Tender', id: tender.id }] });
    expect(asOutsider.data).toEqual({ _entities: [{ id: tender.id, bidCount: null }] });
    const asBuyer = await run(subgraph, buyer, query, { r: [{ __typename: 'Tender', id: tender.id }] });
    expect(asBuyer.data).toEqual({ _entities: [{ id: tender.id, bidCount: 12 }] });
  });

  it('once the deadline has passed (the tender not yet settled by any read): the buyer every bid, others still only their own, one statement each', async () => {
    const wait = tender.end.getTime() - Date.now() + 50;
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    const buyerView = await references(buyer, ids());
    expect(buyerView.seen).toEqual(ids());
    expect(buyerView.statements).toBe(1);
    expect((await references(outsider, ids())).seen).toEqual(ids().map(() => null));
    expect((await references(bids[5].vendor, ids())).seen).toEqual(ids().map((id, i) => (i === 5 ? id : null)));
    // Unknown and malformed ids are null, not errors; a test key never reaches a live bid.
    expect((await references(buyer, ['not-a-uuid', '00000000-0000-4000-8000-ffffffffffff'])).seen).toEqual([null, null]);
    expect((await references({ ...buyer, kind: 'test', mode: 'test' }, ids())).seen).toEqual(ids().map(() => null));
  });
});
