import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { buildPartsSchema } from '../../../subgraphs/shared/subgraph.js';
import { marketplaceParts } from '../../../subgraphs/marketplace/index.js';
import { rankByPrice, rankByRatedCriteria } from '../../../subgraphs/marketplace/award/award-scoring.js';
import { canonicalJson, receiptContent, sha256Hex } from '../../../subgraphs/marketplace/bid/bid-receipt.js';
import type { Bid } from '../../../subgraphs/marketplace/bid/bid.entity.js';
import { TenderStatus } from '../../../subgraphs/marketplace/tender/tender-status.js';
import { assertTransition, canTransition, IllegalTenderTransitionError, TENDER_TRANSITIONS } from '../../../subgraphs/marketplace/tender/tender-transitions.js';
import { execute, parse } from 'graphql';

describe('the tender transition table', () => {
  it('allows exactly the written moves', () => {
    const allowed = Object.entries(TENDER_TRANSITIONS).flatMap(([from, tos]) => Object.keys(tos).map((to) => `${from}->${to}`));
    expect(allowed.sort()).toEqual(
      [
        'draft->active',
        'draft->cancelled',
        'active->evaluation',
        'active->unsuccessful',
        'active->cancelled',
        'evaluation->awarded',
        'evaluation->unsuccessful',
        'evaluation->cancelled',
        'awarded->complete',
        'awarded->unsuccessful',
        'awarded->cancelled',
      ].sort(),
    );
  });

  it('refuses everything else with a 409 coded error naming from and to; final states go nowhere', () => {
    for (const from of Object.values(TenderStatus)) {
      for (const to of Object.values(TenderStatus)) {
        if (canTransition(from, to)) continue;
        const error = (() => {
          try {
            assertTransition(from, to);
          } catch (e) {
            return e;
          }
        })();
        expect(error).toBeInstanceOf(IllegalTenderTransitionError);
        expect((error as IllegalTenderTransitionError).extensions).toMatchObject({ code: 'CONFLICT', reason: 'illegal_tender_transition', from, to });
      }
    }
    for (const final of [TenderStatus.COMPLETE, TenderStatus.CANCELLED, TenderStatus.UNSUCCESSFUL]) expect(TENDER_TRANSITIONS[final]).toEqual({});
  });
});

const bid = (id: string, amount: string, at: number): Bid => ({ id, amount, createdAt: new Date(at) }) as Bid;

describe('award scoring', () => {
  it('price only: lowest first, the earlier bid winning a tie', () => {
    expect(rankByPrice([bid('a', '300.00', 2), bid('b', '200.00', 3), bid('c', '200.00', 1)]).map((s) => [s.bidId, s.rank])).toEqual([['c', 1], ['b', 2], ['a', 3]]);
  });

  it('rated criteria: lowest/price × price weight + quality × quality weight / 100', () => {
    const ranking = rankByRatedCriteria([bid('cheap', '80.00', 1), bid('good', '100.00', 2)], new Map([['cheap', 50], ['good', 90]]), 70, 30);
    // cheap: 70 + 15 = 85; good: 56 + 27 = 83.
    expect(ranking).toEqual([
      { bidId: 'cheap', rank: 1, amount: 80, priceScore: 70, qualityScore: 15, total: 85 },
      { bidId: 'good', rank: 2, amount: 100, priceScore: 56, qualityScore: 27, total: 83 },
    ]);
  });
});

describe('bid receipts', () => {
  it('hash one canonical text whatever the key order, and change with any field', () => {
    expect(canonicalJson({ b: 1, a: { d: [2, { f: 1, e: 0 }], c: 'x' } })).toBe('{"a":{"c":"x","d":[2,{"e":0,"f":1}]},"b":1}');
    const stored = { id: 'b1', version: 1, tenderId: 't', lotId: null, vendorId: 'v', amount: '10.5', currency: 'EUR', documents: [], qualityAnswers: ['q'] } as unknown as Bid;
    const at = new Date('2026-11-23T10:00:00.123Z');
    const text = canonicalJson(receiptContent(stored, at));
    expect(text).toBe('{"amount":"10.50","bidId":"b1","currency":"EUR","documents":[],"lotId":null,"qualityAnswers":["q"],"recordedAt":"2026-11-23T10:00:00.123Z","tenderId":"t","vendorId":"v","version":1}');
    expect(sha256Hex(text)).toBe(createHash('sha256').update(text).digest('hex'));
    expect(sha256Hex(canonicalJson(receiptContent({ ...stored, amount: '10.51' } as Bid, at)))).not.toBe(sha256Hex(text));
    expect(sha256Hex(canonicalJson(receiptContent(stored, new Date(at.getTime() + 1))))).not.toBe(sha256Hex(text));
  });
});

describe('key kinds of the marketplace', () => {
  it('opens qualifyVendor to admin keys only, and every other root field to live and test keys only', async () => {
    const schema = await buildPartsSchema(marketplaceParts);
    const run = async (kind: string, source: string) =>
      (await execute({ schema, document: parse(source), contextValue: { principal: { kind, accountId: 'a', mode: 'live', keyId: 'k' }, em: {}, loaders: new Map() } })).errors?.[0]?.extensions;
    expect(await run('live', 'mutation { qualifyVendor(id: "x", status: APPROVED) { id } }')).toMatchObject({ code: 'FORBIDDEN', reason: 'wrong_key_kind' });
    expect(await run('test', 'mutation { qualifyVendor(id: "x", status: APPROVED) { id } }')).toMatchObject({ code: 'FORBIDDEN', reason: 'wrong_key_kind' });
    // An admin key passes the kind check and reaches the service (which finds no vendor "x").
    expect(await run('admin', 'mutation { qualifyVendor(id: "x", status: APPROVED) { id } }')).toMatchObject({ code: 'NOT_FOUND', reason: 'vendor_not_found' });
    for (const field of ['{ tenders { hasMore } }', '{ vendors { hasMore } }', 'mutation { registerVendor(name: "n", country: "DE", registrationNumber: "r", contactEmail: "a@b.example") { id } }', '{ jobPostings { hasMore } }']) {
      expect(await run('admin', field)).toMatchObject({ code: 'FORBIDDEN', reason: 'wrong_key_kind' });
    }
  });
});
