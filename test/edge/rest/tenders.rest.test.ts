import { createHash } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../support/platform-harness.js';
import { body, expectError, tenderKit, type BidBody, type Party, type ReceiptBody, type TenderBody } from './tenders-support.js';

let platform: TestPlatform;
let sql: pg.Client;
const kit = tenderKit(() => platform);
const { api, graphql, qualify, party, vendor, tender, bid, placed, pastDeadline } = kit;

beforeAll(async () => {
  platform = await startTestPlatform();
  sql = new pg.Client({ connectionString: platform.databaseUrl });
  await sql.connect();
});

afterAll(async () => {
  await sql?.end();
  await platform?.close();
});

const UNKNOWN = '00000000-0000-4000-8000-ffffffffffff';

describe('tenders', () => {
  let buyer: Party;
  beforeAll(async () => {
    buyer = await party();
  });

  it('POST /tenders answers 201 with the OCDS-shaped tender, GET /tenders and /tenders/{id} show it', async () => {
    const created = await tender(buyer.key, { json: { lots: [{ title: 'North', amount: 600 }, { title: 'South', amount: 400 }] } });
    expect(created).toMatchObject({
      title: 'Road resurfacing',
      status: 'ACTIVE',
      value: { amount: 1000, currency: 'EUR' },
      procurementMethod: 'OPEN',
      awardCriteria: 'PRICE_ONLY',
      weights: null,
      bidCount: 0,
      termsVersion: 1,
      isBuyer: true,
      livemode: true,
      awards: [],
      documents: [],
    });
    expect(created.lots).toEqual([
      { id: expect.any(String), title: 'North', description: null, value: { amount: 600, currency: 'EUR' } },
      { id: expect.any(String), title: 'South', description: null, value: { amount: 400, currency: 'EUR' } },
    ]);
    expect(new Date(created.tenderPeriod.startDate).getTime()).toBeLessThanOrEqual(Date.now() + 1000);
    expect(await body(await api(`/tenders/${created.id}`, buyer.key), 200)).toEqual(created);
    const page = await body<{ data: TenderBody[] }>(await api('/tenders?mine=true', buyer.key), 200);
    expect(page.data.map((t) => t.id)).toContain(created.id);
  });

  it.each([
    ['a deadline in the past', { tenderPeriod: { endDate: new Date(Date.now() - 1000).toISOString() } }, 'invalid_tender_period'],
    ['rated criteria without weights', { awardCriteria: 'RATED_CRITERIA' }, 'invalid_award_criteria'],
    ['weights not summing to 100', { awardCriteria: 'RATED_CRITERIA', weights: { price: 60, quality: 30 } }, 'invalid_award_criteria'],
    ['lots worth more than the tender', { lots: [{ title: 'A', amount: 900 }, { title: 'B', amount: 200 }] }, 'invalid_lots'],
    ['a currency that is not ISO 4217', { value: { amount: 10, currency: 'euro' } }, 'invalid_parameter'],
    ['an amount with more than two decimals', { value: { amount: 10.001, currency: 'EUR' } }, 'invalid_parameter'],
    ['a lot beyond any budget', { lots: [{ title: 'A', amount: 1e300 }] }, 'invalid_parameter'],
  ])('refuses %s with 400 and stores nothing', async (_label, json, code) => {
    const key = (await party()).key;
    await expectError(
      await api('/tenders', key, { method: 'POST', json: { title: 'T', description: 'd', value: { amount: 1000, currency: 'EUR' }, tenderPeriod: { endDate: new Date(Date.now() + 60_000).toISOString() }, ...json } }),
      400,
      code,
    );
    expect((await body<{ data: unknown[] }>(await api('/tenders?mine=true', key), 200)).data).toEqual([]);
  });

  it('keeps a draft to its buyer, publishes it once, and refuses illegal transitions with 409 naming from and to', async () => {
    const draft = await tender(buyer.key, { publish: false });
    expect(draft.status).toBe('DRAFT');
    const other = await party();
    await expectError(await api(`/tenders/${draft.id}`, other.key), 404, 'tender_not_found');
    await expectError(await api(`/tenders/${draft.id}/publish`, other.key, { method: 'POST' }), 404, 'tender_not_found');
    const published = await body<TenderBody>(await api(`/tenders/${draft.id}/publish`, buyer.key, { method: 'POST' }), 200);
    expect(published.status).toBe('ACTIVE');
    expect(await body<TenderBody>(await api(`/tenders/${draft.id}`, other.key), 200)).toMatchObject({ id: draft.id, isBuyer: false });
    await expectError(await api(`/tenders/${draft.id}/publish`, buyer.key, { method: 'POST' }), 409, 'illegal_tender_transition');
    const viaGraphql = await graphql(buyer.key, 'mutation($id: ID!) { publishTender(id: $id) { id } }', { id: draft.id });
    expect(viaGraphql.errors?.[0]).toMatchObject({ message: 'A tender cannot go from active to active', extensions: { code: 'CONFLICT', reason: 'illegal_tender_transition', from: 'active', to: 'active' } });
    await expectError(await api(`/tenders/${draft.id}/cancel`, other.key, { method: 'POST', json: { reason: 'no' } }), 403, 'not_tender_buyer');
    const cancelled = await body<TenderBody>(await api(`/tenders/${draft.id}/cancel`, buyer.key, { method: 'POST', json: { reason: 'Budget withdrawn' } }), 200);
    expect(cancelled).toMatchObject({ status: 'CANCELLED', cancellationReason: 'Budget withdrawn' });
    await expectError(await api(`/tenders/${draft.id}/cancel`, buyer.key, { method: 'POST', json: { reason: 'again' } }), 409, 'illegal_tender_transition');
    const seller = await vendor();
    await expectError(await bid(seller.key, draft.id, { amount: 10 }), 409, 'tender_not_open');
  });

  it('GET /tenders/{id} answers 404 tender_not_found for unknown and malformed ids', async () => {
    await expectError(await api(`/tenders/${UNKNOWN}`, buyer.key), 404, 'tender_not_found');
    await expectError(await api('/tenders/nope', buyer.key), 404, 'tender_not_found');
  });
});

describe('vendors', () => {
  it('registers a vendor (201, pending), refuses a second registration with 409 vendor_exists and its id', async () => {
    const p = await party();
    const json = { name: 'Acme GmbH', country: 'DE', registrationNumber: 'HRB 1', contactEmail: 'Sales@Acme.example', categories: ['roads', 'roads', 'bridges'] };
    const created = await body<Record<string, unknown>>(await api('/vendors', p.key, { method: 'POST', json }), 201);
    expect(created).toMatchObject({ name: 'Acme GmbH', country: 'DE', registrationNumber: 'HRB 1', contactEmail: 'sales@acme.example', categories: ['roads', 'bridges'], status: 'PENDING', livemode: true });
    const again = await expectError(await api('/vendors', p.key, { method: 'POST', json }), 409, 'vendor_exists');
    expect(again.existing_id).toBe(created.id);
    // Others read the registry (to invite), but not the contact email.
    const other = await party();
    expect(await body(await api(`/vendors/${created.id}`, other.key), 200)).toMatchObject({ id: created.id, contactEmail: null });
    await expectError(await api('/vendors', p.key, { method: 'POST', json: { ...json, country: 'Germany' } }), 400, 'invalid_parameter');
  });

  it('qualifies by admin key only, along pending → approved → suspended → approved', async () => {
    const seller = await vendor({ approve: false });
    const buyer = await party();
    const t = await tender(buyer.key);
    await expectError(await bid(seller.key, t.id, { amount: 10 }), 403, 'vendor_not_approved');
    // A live key cannot qualify, not even its own vendor.
    const self = await graphql(seller.key, 'mutation($id: ID!) { qualifyVendor(id: $id, status: APPROVED) { status } }', { id: seller.vendorId });
    expect(self.errors?.[0].extensions).toMatchObject({ code: 'FORBIDDEN', reason: 'wrong_key_kind' });
    const illegal = await graphql(await kit.admin(), 'mutation($id: ID!) { qualifyVendor(id: $id, status: SUSPENDED) { status } }', { id: seller.vendorId });
    expect(illegal.errors?.[0]).toMatchObject({ message: 'A vendor cannot go from pending to suspended', extensions: { code: 'CONFLICT', reason: 'illegal_vendor_transition', from: 'pending', to: 'suspended' } });
    expect(await qualify(seller.vendorId!, 'APPROVED')).toEqual({ status: 'APPROVED' });
    await qualify(seller.vendorId!, 'SUSPENDED');
    await expectError(await bid(seller.key, t.id, { amount: 10 }), 403, 'vendor_not_approved');
    await qualify(seller.vendorId!, 'APPROVED');
    await placed(seller.key, t.id, { amount: 10 });
    const audit = await sql.query(`select "from", "to", "actor" from "marketplace"."marketplace_audit" where "subject_id" = $1 order by "created_at"`, [seller.vendorId]);
    expect(audit.rows.map((r) => `${r.from}->${r.to}`)).toEqual(['null->pending', 'pending->approved', 'approved->suspended', 'suspended->approved']);
  });

  it('keeps every other marketplace field closed to admin keys', async () => {
    const result = await graphql(await kit.admin(), '{ tenders { data { id } } }');
    expect(result.errors?.[0].extensions).toMatchObject({ code: 'FORBIDDEN', reason: 'wrong_key_kind' });
    const vendors = await graphql(await kit.admin(), '{ vendors { data { id } } }');
    expect(vendors.errors?.[0].extensions).toMatchObject({ code: 'FORBIDDEN', reason: 'wrong_key_kind' });
  });

  it('refuses a bid from an account that is no vendor with 403 vendor_not_registered', async () => {
    const t = await tender((await party()).key);
    await expectError(await bid((await party()).key, t.id, { amount: 10 }), 403, 'vendor_not_registered');
  });
});

describe('placing bids', () => {
  let buyer: Party;
  let seller: Party;
  beforeAll(async () => {
    buyer = await party();
    seller = await vendor();
  });

  it('answers 201 with the bid and a receipt whose SHA-256 is over the canonical content and time', async () => {
    const t = await tender(buyer.key);
    const { bid: b, receipt } = await placed(seller.key, t.id, { amount: 950.5, documents: [UNKNOWN], qualityAnswers: ['ISO 9001'] });
    expect(b).toMatchObject({ tenderId: t.id, vendorId: seller.vendorId, status: 'ACTIVE', version: 1, value: { amount: 950.5, currency: 'EUR' }, termsVersion: 1 });
    expect(receipt.sha256).toBe(createHash('sha256').update(receipt.canonical).digest('hex'));
    expect(JSON.parse(receipt.canonical)).toEqual({
      amount: '950.50',
      bidId: b.id,
      currency: 'EUR',
      documents: [UNKNOWN],
      lotId: null,
      qualityAnswers: ['ISO 9001'],
      recordedAt: receipt.recordedAt.replace(/Z$/, '').replace(/(\.\d{3})?$/, (m) => m || '.000') + 'Z',
      tenderId: t.id,
      vendorId: seller.vendorId,
      version: 1,
    });
    expect(new Date(receipt.recordedAt).getTime()).toBeLessThan(new Date(t.tenderPeriod.endDate).getTime());
    const stored = await sql.query(`select "sha256", "canonical" from "marketplace"."bid_receipt" where "bid_id" = $1`, [b.id]);
    expect(stored.rows).toEqual([{ sha256: receipt.sha256, canonical: receipt.canonical }]);
  });

  it('refuses the buyer, a second bid on the same lot, a bid above budget or in another currency', async () => {
    const t = await tender(buyer.key, { json: { lots: [{ title: 'A', amount: 300 }, { title: 'B', amount: 700 }] } });
    const buyerVendor = await vendor({ account: `${buyer.account}-v` });
    void buyerVendor;
    // The buyer's account registered as a vendor still cannot bid on its own tender.
    const own = await vendor({ account: buyer.account });
    await expectError(await bid(own.key, t.id, { amount: 10, lotId: t.lots[0].id }), 403, 'own_tender_bid');
    await expectError(await bid(seller.key, t.id, { amount: 10 }), 400, 'invalid_lot');
    await expectError(await bid(seller.key, t.id, { amount: 10, lotId: UNKNOWN }), 400, 'invalid_lot');
    await expectError(await bid(seller.key, t.id, { amount: 300.01, lotId: t.lots[0].id }), 400, 'bid_above_budget');
    await expectError(await bid(seller.key, t.id, { amount: 100, currency: 'USD', lotId: t.lots[0].id }), 400, 'bid_currency_mismatch');
    const first = await placed(seller.key, t.id, { amount: 300, lotId: t.lots[0].id });
    const second = await expectError(await bid(seller.key, t.id, { amount: 200, lotId: t.lots[0].id }), 409, 'bid_exists');
    expect(second.existing_id).toBe(first.bid.id);
    // Another lot is another bid.
    await placed(seller.key, t.id, { amount: 700, lotId: t.lots[1].id });
    const noLots = await tender(buyer.key);
    await expectError(await bid(seller.key, noLots.id, { amount: 1000.01 }), 400, 'bid_above_budget');
    await expectError(await bid(seller.key, noLots.id, { amount: 10, lotId: t.lots[0].id }), 400, 'invalid_lot');
    const count = await sql.query(`select count(*)::int as n from "marketplace"."bid" where "tender_id" = $1`, [noLots.id]);
    expect(count.rows[0].n).toBe(0);
  });

  it('takes bids on a selective tender from invited vendors only, and shows the invitations to the buyer only', async () => {
    const invited = await vendor();
    const t = await tender(buyer.key, { json: { procurementMethod: 'SELECTIVE', invitedVendorIds: [invited.vendorId] } });
    expect(t.invitedVendorIds).toEqual([invited.vendorId]);
    expect((await body<TenderBody>(await api(`/tenders/${t.id}`, seller.key), 200)).invitedVendorIds).toBeNull();
    await expectError(await bid(seller.key, t.id, { amount: 10 }), 403, 'vendor_not_invited');
    await expectError(await kit.api('/tenders', buyer.key, { method: 'POST', json: { title: 'T', description: 'd', value: { amount: 10, currency: 'EUR' }, tenderPeriod: { endDate: new Date(Date.now() + 60_000).toISOString() }, procurementMethod: 'SELECTIVE', invitedVendorIds: [UNKNOWN] } }), 400, 'unknown_vendor');
    await placed(invited.key, t.id, { amount: 10 });
  });

  it('amends with a new receipt (the old one kept), withdraws, and lets the vendor bid again', async () => {
    const t = await tender(buyer.key);
    const first = await placed(seller.key, t.id, { amount: 500 });
    const amended = await body<{ bid: BidBody; receipt: ReceiptBody }>(await api(`/bids/${first.bid.id}`, seller.key, { method: 'PUT', json: { amount: 450 } }), 200);
    expect(amended.bid).toMatchObject({ id: first.bid.id, version: 2, value: { amount: 450, currency: 'EUR' } });
    expect(amended.receipt).toMatchObject({ bidId: first.bid.id, version: 2 });
    expect(amended.receipt.sha256).not.toBe(first.receipt.sha256);
    await expectError(await api(`/bids/${first.bid.id}`, seller.key, { method: 'PUT', json: { amount: 1001 } }), 400, 'bid_above_budget');

    const v1 = await body<Record<string, unknown>>(await api(`/bid-receipts/${first.receipt.id}?sha256=${first.receipt.sha256}`, seller.key), 200);
    expect(v1).toMatchObject({ valid: true, matchesCurrentBid: false, recomputedSha256: first.receipt.sha256 });
    const v2 = await body<Record<string, unknown>>(await api(`/bid-receipts/${amended.receipt.id}`, seller.key), 200);
    expect(v2).toMatchObject({ valid: true, matchesCurrentBid: true });
    const wrong = await body<Record<string, unknown>>(await api(`/bid-receipts/${amended.receipt.id}?sha256=${first.receipt.sha256}`, seller.key), 200);
    expect(wrong).toMatchObject({ valid: false });
    // A receipt altered in storage no longer verifies.
    await sql.query(`update "marketplace"."bid_receipt" set "canonical" = replace("canonical", '"450.00"', '"449.00"') where "id" = $1`, [amended.receipt.id]);
    expect(await body<Record<string, unknown>>(await api(`/bid-receipts/${amended.receipt.id}`, seller.key), 200)).toMatchObject({ valid: false, matchesCurrentBid: false });
    // Nobody else reads the receipt.
    await expectError(await api(`/bid-receipts/${first.receipt.id}`, buyer.key), 404, 'bid_receipt_not_found');

    const withdrawn = await body<BidBody>(await api(`/bids/${first.bid.id}/withdraw`, seller.key, { method: 'POST' }), 200);
    expect(withdrawn.status).toBe('WITHDRAWN');
    await expectError(await api(`/bids/${first.bid.id}`, seller.key, { method: 'PUT', json: { amount: 400 } }), 409, 'bid_not_changeable');
    expect((await body<TenderBody>(await api(`/tenders/${t.id}`, buyer.key), 200)).bidCount).toBe(0);
    await placed(seller.key, t.id, { amount: 400 });
    const receipts = await sql.query(`select "version" from "marketplace"."bid_receipt" where "bid_id" = $1 order by "version"`, [first.bid.id]);
    expect(receipts.rows.map((r) => r.version)).toEqual([1, 2]);
  });
});

describe('the sealed-bid rule, from every viewpoint', () => {
  let buyer: Party;
  let buyerTest: Party;
  let sellerA: Party;
  let sellerATest: Party;
  let sellerB: Party;
  let outsider: Party;
  let t: TenderBody;
  let bidA: BidBody;
  let bidB: BidBody;

  beforeAll(async () => {
    buyer = await party();
    buyerTest = await party('test', buyer.account);
    sellerA = await vendor();
    sellerATest = await party('test', sellerA.account);
    sellerB = await vendor();
    outsider = await party();
    t = await tender(buyer.key, { endInMs: 2500 });
    bidA = (await placed(sellerA.key, t.id, { amount: 800, documents: [UNKNOWN] })).bid;
    bidB = (await placed(sellerB.key, t.id, { amount: 700 })).bid;
  });

  const bidsOf = async (p: Party) => body<{ data: BidBody[] }>(await api(`/tenders/${t.id}/bids`, p.key), 200);

  it('while active: the buyer gets 403 bids_sealed and a count; each vendor its own; test keys nothing', async () => {
    await expectError(await api(`/tenders/${t.id}/bids`, buyer.key), 403, 'bids_sealed');
    const seen = await body<TenderBody>(await api(`/tenders/${t.id}`, buyer.key), 200);
    expect(seen).toMatchObject({ status: 'ACTIVE', bidCount: 2, awards: [] });
    const text = JSON.stringify(seen);
    for (const secret of ['800', '700', sellerA.vendorId!, sellerB.vendorId!, UNKNOWN]) expect(text).not.toContain(secret);
    await expectError(await api(`/bids/${bidA.id}`, buyer.key), 404, 'bid_not_found');
    const gql = await graphql(buyer.key, 'query($id: ID!) { tenderBids(id: $id) { data { id value { amount } } } }', { id: t.id });
    expect(gql.errors?.[0].extensions).toMatchObject({ code: 'FORBIDDEN', reason: 'bids_sealed' });
    expect(gql.data ?? null).toBeNull();

    expect((await bidsOf(sellerA)).data.map((b) => b.id)).toEqual([bidA.id]);
    expect((await bidsOf(sellerB)).data.map((b) => b.id)).toEqual([bidB.id]);
    expect((await bidsOf(outsider)).data).toEqual([]);
    await expectError(await api(`/bids/${bidB.id}`, sellerA.key), 404, 'bid_not_found');
    expect(await body<BidBody>(await api(`/bids/${bidA.id}`, sellerA.key), 200)).toMatchObject({ id: bidA.id, value: { amount: 800 } });

    for (const testKey of [buyerTest, sellerATest]) {
      await expectError(await api(`/tenders/${t.id}`, testKey.key), 404, 'tender_not_found');
      await expectError(await api(`/tenders/${t.id}/bids`, testKey.key), 404, 'tender_not_found');
      await expectError(await api(`/bids/${bidA.id}`, testKey.key), 404, 'bid_not_found');
      expect((await body<{ data: unknown[] }>(await api('/tenders', testKey.key), 200)).data).toEqual([]);
    }
  });

  it('after the deadline: the buyer sees every bid, each vendor still only its own, test keys nothing', async () => {
    await pastDeadline(t);
    const all = await bidsOf(buyer);
    expect(all.data.map((b) => b.id).sort()).toEqual([bidA.id, bidB.id].sort());
    expect(all.data.find((b) => b.id === bidA.id)).toMatchObject({ vendorId: sellerA.vendorId, value: { amount: 800, currency: 'EUR' }, documents: [UNKNOWN] });
    expect((await body<TenderBody>(await api(`/tenders/${t.id}`, buyer.key), 200)).status).toBe('EVALUATION');
    expect((await bidsOf(sellerA)).data.map((b) => b.id)).toEqual([bidA.id]);
    expect((await bidsOf(sellerB)).data.map((b) => b.id)).toEqual([bidB.id]);
    expect((await bidsOf(outsider)).data).toEqual([]);
    await expectError(await api(`/bids/${bidA.id}`, sellerB.key), 404, 'bid_not_found');
    expect(await body<BidBody>(await api(`/bids/${bidA.id}`, buyer.key), 200)).toMatchObject({ id: bidA.id });
    for (const testKey of [buyerTest, sellerATest]) {
      await expectError(await api(`/tenders/${t.id}/bids`, testKey.key), 404, 'tender_not_found');
    }
    await expectError(await bid(sellerA.key, t.id, { amount: 1 }), 409, 'tender_period_closed');
    await expectError(await api(`/bids/${bidA.id}`, sellerA.key, { method: 'PUT', json: { amount: 600 } }), 409, 'tender_period_closed');
    await expectError(await api(`/bids/${bidA.id}/withdraw`, sellerA.key, { method: 'POST' }), 409, 'tender_period_closed');
  });

  it('after the award: everyone entitled sees the award; vendors still only their own bids', async () => {
    const awarded = await body<TenderBody>(await api(`/tenders/${t.id}/award`, buyer.key, { method: 'PUT', json: {} }), 200);
    expect(awarded.status).toBe('AWARDED');
    expect(awarded.awards).toEqual([expect.objectContaining({ bidId: bidB.id, vendorId: sellerB.vendorId, status: 'ACTIVE', value: { amount: 700, currency: 'EUR' } })]);
    for (const viewer of [sellerA, sellerB, outsider]) {
      expect((await body<TenderBody>(await api(`/tenders/${t.id}`, viewer.key), 200)).awards.map((a) => a.bidId)).toEqual([bidB.id]);
    }
    expect((await bidsOf(sellerA)).data).toEqual([expect.objectContaining({ id: bidA.id, status: 'UNSUCCESSFUL' })]);
    expect((await bidsOf(sellerB)).data).toEqual([expect.objectContaining({ id: bidB.id, status: 'AWARDED' })]);
  });
});

describe('terms changed while active', () => {
  it('invalidates placed bids; confirmed ones take part, unconfirmed ones are excluded; confirming after the deadline is refused', async () => {
    const buyer = await party();
    const confirmer = await vendor();
    const sleeper = await vendor();
    const t = await tender(buyer.key, { endInMs: 2500 });
    const kept = (await placed(confirmer.key, t.id, { amount: 900 })).bid;
    const lapsed = (await placed(sleeper.key, t.id, { amount: 500 })).bid;
    await expectError(await api(`/bids/${kept.id}/confirm`, confirmer.key, { method: 'POST' }), 409, 'bid_not_changeable');
    const changed = await body<TenderBody>(await api(`/tenders/${t.id}`, buyer.key, { method: 'PUT', json: { value: { amount: 950, currency: 'EUR' } } }), 200);
    expect(changed).toMatchObject({ termsVersion: 2, value: { amount: 950 } });
    expect((await body<BidBody>(await api(`/bids/${kept.id}`, confirmer.key), 200)).status).toBe('INVALID');
    const changeTrail = await sql.query(`select "from", "to", "reason" from "marketplace"."marketplace_audit" where "subject_id" = any($1::uuid[]) order by "created_at"`, [[t.id, lapsed.id]]);
    expect(changeTrail.rows.slice(-2)).toEqual([
      { from: 'active', to: 'active', reason: 'terms changed (version 2)' },
      { from: 'active', to: 'invalid', reason: 'tender terms changed (version 2)' },
    ]);
    const confirmed = await body<BidBody>(await api(`/bids/${kept.id}/confirm`, confirmer.key, { method: 'POST' }), 200);
    expect(confirmed).toMatchObject({ status: 'ACTIVE', termsVersion: 2 });
    // A title is no term: nothing is invalidated.
    expect((await body<TenderBody>(await api(`/tenders/${t.id}`, buyer.key, { method: 'PUT', json: { title: 'Renamed' } }), 200)).termsVersion).toBe(2);
    expect((await body<BidBody>(await api(`/bids/${kept.id}`, confirmer.key), 200)).status).toBe('ACTIVE');
    await pastDeadline(t);
    await expectError(await api(`/bids/${lapsed.id}/confirm`, sleeper.key, { method: 'POST' }), 409, 'tender_period_closed');
    // The cheaper bid was never confirmed: the award goes to the confirmed one.
    const awarded = await body<TenderBody>(await api(`/tenders/${t.id}/award`, buyer.key, { method: 'PUT', json: {} }), 200);
    expect(awarded.awards[0]).toMatchObject({ bidId: kept.id });
    await expectError(await api(`/tenders/${t.id}/award`, buyer.key, { method: 'PUT', json: { bidId: lapsed.id } }), 409, 'lot_already_awarded');
    expect((await body<BidBody>(await api(`/bids/${lapsed.id}`, sleeper.key), 200)).status).toBe('INVALID');
    await expectError(await api(`/tenders/${t.id}`, buyer.key, { method: 'PUT', json: { title: 'Late' } }), 409, 'tender_not_editable');
  });

  it('makes a confirmation over the new budget an amendment instead (400 bid_above_budget)', async () => {
    const buyer = await party();
    const seller = await vendor();
    const t = await tender(buyer.key);
    const b = (await placed(seller.key, t.id, { amount: 900 })).bid;
    await body(await api(`/tenders/${t.id}`, buyer.key, { method: 'PUT', json: { value: { amount: 800, currency: 'EUR' } } }), 200);
    await expectError(await api(`/bids/${b.id}/confirm`, seller.key, { method: 'POST' }), 400, 'bid_above_budget');
    const amended = await body<{ bid: BidBody }>(await api(`/bids/${b.id}`, seller.key, { method: 'PUT', json: { amount: 790 } }), 200);
    expect(amended.bid).toMatchObject({ status: 'ACTIVE', termsVersion: 2, version: 2 });
  });
});

describe('awards', () => {
  it('refuses before the deadline and to anyone but the buyer; picks the lowest price; cancels to the next best; completes', async () => {
    const buyer = await party();
    const [a, b, c] = [await vendor(), await vendor(), await vendor()];
    const t = await tender(buyer.key, { endInMs: 2500 });
    const bidA = (await placed(a.key, t.id, { amount: 500 })).bid;
    const bidB = (await placed(b.key, t.id, { amount: 400 })).bid;
    const bidC = (await placed(c.key, t.id, { amount: 450 })).bid;
    await body(await api(`/bids/${bidA.id}/withdraw`, a.key, { method: 'POST' }), 200);
    await expectError(await api(`/tenders/${t.id}/award`, buyer.key, { method: 'PUT', json: {} }), 409, 'illegal_tender_transition');
    await pastDeadline(t);
    await expectError(await api(`/tenders/${t.id}/award`, a.key, { method: 'PUT', json: {} }), 403, 'not_tender_buyer');
    await expectError(await api(`/tenders/${t.id}/award`, buyer.key, { method: 'PUT', json: { bidId: bidA.id } }), 409, 'bid_not_valid');
    const notBest = await expectError(await api(`/tenders/${t.id}/award`, buyer.key, { method: 'PUT', json: { bidId: bidC.id } }), 409, 'award_not_best_bid');
    expect(notBest.message).toContain(bidB.id);
    const awarded = await body<TenderBody>(await api(`/tenders/${t.id}/award`, buyer.key, { method: 'PUT', json: { bidId: bidB.id } }), 200);
    expect(awarded.status).toBe('AWARDED');
    expect(awarded.awards).toEqual([
      expect.objectContaining({ bidId: bidB.id, status: 'ACTIVE', value: { amount: 400, currency: 'EUR' }, scores: [expect.objectContaining({ bidId: bidB.id, rank: 1 }), expect.objectContaining({ bidId: bidC.id, rank: 2 })] }),
    ]);
    expect((await body<BidBody>(await api(`/bids/${bidC.id}`, buyer.key), 200)).status).toBe('UNSUCCESSFUL');

    await expectError(await api(`/tenders/${t.id}/award/cancel`, buyer.key, { method: 'POST', json: { reason: ' ' } }), 400, 'invalid_parameter');
    const cancelled = await body<TenderBody>(await api(`/tenders/${t.id}/award/cancel`, buyer.key, { method: 'POST', json: { reason: 'Failed the qualification check' } }), 200);
    expect(cancelled.status).toBe('AWARDED');
    expect(cancelled.awards.map((x) => [x.bidId, x.status, x.cancellationReason])).toEqual([
      [bidB.id, 'CANCELLED', 'Failed the qualification check'],
      [bidC.id, 'PENDING', null],
    ]);
    expect((await body<BidBody>(await api(`/bids/${bidB.id}`, buyer.key), 200)).status).toBe('UNSUCCESSFUL');
    await expectError(await api(`/tenders/${t.id}/complete`, buyer.key, { method: 'POST' }), 409, 'awards_pending');
    const confirmed = await body<TenderBody>(await api(`/tenders/${t.id}/award`, buyer.key, { method: 'PUT', json: { bidId: bidC.id } }), 200);
    expect(confirmed.awards[1]).toMatchObject({ bidId: bidC.id, status: 'ACTIVE' });
    const complete = await body<TenderBody>(await api(`/tenders/${t.id}/complete`, buyer.key, { method: 'POST' }), 200);
    expect(complete.status).toBe('COMPLETE');
    await expectError(await api(`/tenders/${t.id}/award/cancel`, buyer.key, { method: 'POST', json: { reason: 'late' } }), 409, 'award_not_cancellable');

    const trail = await sql.query(`select "subject_type", "from", "to" from "marketplace"."marketplace_audit" where "subject_id" = $1 order by "created_at"`, [t.id]);
    expect(trail.rows.map((r) => `${r.from}->${r.to}`)).toEqual(['null->draft', 'draft->active', 'active->evaluation', 'evaluation->awarded', 'awarded->complete']);
    const bidTrail = await sql.query(`select "from", "to" from "marketplace"."marketplace_audit" where "subject_id" = $1 order by "created_at"`, [bidC.id]);
    expect(bidTrail.rows.map((r) => `${r.from}->${r.to}`)).toEqual(['null->active', 'active->unsuccessful', 'unsuccessful->awarded']);
    const awardTrail = await sql.query(`select count(*)::int as n from "marketplace"."marketplace_audit" where "subject_type" = 'award' and "subject_id" in (select "id" from "marketplace"."award" where "tender_id" = $1)`, [t.id]);
    expect(awardTrail.rows[0].n).toBe(4);
  });

  it('rated criteria: requires a quality score per valid bid and publishes the scores that decided', async () => {
    const buyer = await party();
    const [cheap, good] = [await vendor(), await vendor()];
    const t = await tender(buyer.key, { endInMs: 2000, json: { awardCriteria: 'RATED_CRITERIA', weights: { price: 60, quality: 40 } } });
    expect(t.weights).toEqual({ price: 60, quality: 40 });
    const bidCheap = (await placed(cheap.key, t.id, { amount: 500, qualityAnswers: ['basic'] })).bid;
    const bidGood = (await placed(good.key, t.id, { amount: 600, qualityAnswers: ['premium'] })).bid;
    await pastDeadline(t);
    await expectError(await api(`/tenders/${t.id}/award`, buyer.key, { method: 'PUT', json: { qualityScores: [{ bidId: bidCheap.id, score: 50 }] } }), 400, 'invalid_quality_scores');
    const scores = [{ bidId: bidCheap.id, score: 40 }, { bidId: bidGood.id, score: 100 }];
    // cheap: 500/500×60 + 40×0.4 = 76; good: 500/600×60 + 100×0.4 = 90.
    await expectError(await api(`/tenders/${t.id}/award`, buyer.key, { method: 'PUT', json: { bidId: bidCheap.id, qualityScores: scores } }), 409, 'award_not_best_bid');
    const awarded = await body<TenderBody>(await api(`/tenders/${t.id}/award`, buyer.key, { method: 'PUT', json: { qualityScores: scores } }), 200);
    expect(awarded.awards[0]).toMatchObject({ bidId: bidGood.id, value: { amount: 600 } });
    expect(awarded.awards[0].scores).toEqual([
      { bidId: bidGood.id, rank: 1, amount: 600, priceScore: 50, qualityScore: 40, total: 90 },
      { bidId: bidCheap.id, rank: 2, amount: 500, priceScore: 60, qualityScore: 16, total: 76 },
    ]);
  });

  it('awards lots apart: the tender is AWARDED once every lot with valid bids is', async () => {
    const buyer = await party();
    const seller = await vendor();
    const t = await tender(buyer.key, { endInMs: 2000, json: { lots: [{ title: 'A', amount: 500 }, { title: 'B', amount: 499.5 }, { title: 'C', amount: 0.5 }] } });
    const onA = (await placed(seller.key, t.id, { amount: 100, lotId: t.lots[0].id })).bid;
    const onB = (await placed(seller.key, t.id, { amount: 200, lotId: t.lots[1].id })).bid;
    await pastDeadline(t);
    await expectError(await api(`/tenders/${t.id}/award`, buyer.key, { method: 'PUT', json: {} }), 400, 'invalid_lot');
    const first = await body<TenderBody>(await api(`/tenders/${t.id}/award`, buyer.key, { method: 'PUT', json: { lotId: t.lots[0].id } }), 200);
    expect(first.status).toBe('EVALUATION');
    const second = await body<TenderBody>(await api(`/tenders/${t.id}/award`, buyer.key, { method: 'PUT', json: { bidId: onB.id } }), 200);
    expect(second.status).toBe('AWARDED');
    expect(second.awards.map((x) => [x.lotId, x.bidId])).toEqual([[t.lots[0].id, onA.id], [t.lots[1].id, onB.id]]);
  });

  it('ends UNSUCCESSFUL when the deadline passes without a valid bid, and when the last award is cancelled with no next best', async () => {
    const buyer = await party();
    const empty = await tender(buyer.key, { endInMs: 1500 });
    const single = await tender(buyer.key, { endInMs: 1500 });
    const seller = await vendor();
    await placed(seller.key, single.id, { amount: 10 });
    await pastDeadline(single);
    expect((await body<TenderBody>(await api(`/tenders/${empty.id}`, buyer.key), 200)).status).toBe('UNSUCCESSFUL');
    expect((await body<{ data: TenderBody[] }>(await api('/tenders?status=UNSUCCESSFUL&mine=true', buyer.key), 200)).data.map((x) => x.id)).toEqual([empty.id]);
    await expectError(await api(`/tenders/${empty.id}/award`, buyer.key, { method: 'PUT', json: {} }), 409, 'illegal_tender_transition');
    await body(await api(`/tenders/${single.id}/award`, buyer.key, { method: 'PUT', json: {} }), 200);
    const cancelled = await body<TenderBody>(await api(`/tenders/${single.id}/award/cancel`, buyer.key, { method: 'POST', json: { reason: 'Vendor declined' } }), 200);
    expect(cancelled.status).toBe('UNSUCCESSFUL');
    const trail = await sql.query(`select "actor", "from", "to" from "marketplace"."marketplace_audit" where "subject_id" = $1 order by "created_at"`, [empty.id]);
    expect(trail.rows.at(-1)).toEqual({ actor: 'system', from: 'active', to: 'unsuccessful' });
  });
});

describe('the edge and the sandbox', () => {
  it('replays POST /tenders/{id}/bid with the same Idempotency-Key instead of placing twice', async () => {
    const buyer = await party();
    const seller = await vendor();
    const t = await tender(buyer.key);
    const send = () => platform.request(`/api/v1/tenders/${t.id}/bid`, { method: 'POST', key: seller.key, json: { amount: 321, currency: 'EUR' }, headers: { 'idempotency-key': `bid-${t.id}` } });
    const first = await body<{ bid: BidBody; receipt: ReceiptBody }>(await send(), 201);
    const again = await send();
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await body(again, 201)).toEqual(first);
    const stored = await sql.query(`select count(*)::int as n from "marketplace"."bid" where "tender_id" = $1`, [t.id]);
    expect(stored.rows[0].n).toBe(1);
  });

  it('lists the tender paths in the OpenAPI document', async () => {
    const document = await body<{ paths: Record<string, Record<string, unknown>> }>(await platform.request('/api/v1/openapi.json'), 200);
    expect(Object.keys(document.paths['/tenders/{id}/bid'] ?? {})).toContain('post');
    expect(Object.keys(document.paths['/tenders/{id}/bids'] ?? {})).toContain('get');
    expect(Object.keys(document.paths['/tenders/{id}/award'] ?? {})).toContain('put');
    expect(Object.keys(document.paths['/tenders'] ?? {}).sort()).toEqual(['get', 'post']);
  });

  it('runs a whole tender in test mode, apart from live: its own vendors, tenders and bids', async () => {
    const buyer = await party('test');
    const seller = await vendor({ kind: 'test' });
    const liveTwin = await party('live', seller.account);
    // The live side of the vendor's account is no vendor, and sees neither the test vendor nor the test tender.
    await expectError(await api(`/vendors/${seller.vendorId}`, liveTwin.key), 404, 'vendor_not_found');
    const t = await tender(buyer.key, { endInMs: 1500 });
    expect(t.livemode).toBe(false);
    await expectError(await bid(liveTwin.key, t.id, { amount: 10 }), 404, 'tender_not_found');
    const placedBid = (await placed(seller.key, t.id, { amount: 10 })).bid;
    expect(placedBid.livemode).toBe(false);
    await pastDeadline(t);
    const awarded = await body<TenderBody>(await api(`/tenders/${t.id}/award`, buyer.key, { method: 'PUT', json: {} }), 200);
    expect(awarded.awards[0].bidId).toBe(placedBid.id);
    expect((await body<{ data: unknown[] }>(await api('/tenders', liveTwin.key), 200)).data.map((x) => (x as { id: string }).id)).not.toContain(t.id);
  });
});

