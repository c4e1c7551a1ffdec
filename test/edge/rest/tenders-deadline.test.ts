import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../support/platform-harness.js';
import { body, expectError, sleep, tenderKit, type Party, type ReceiptBody, type TenderBody } from './tenders-support.js';

let platform: TestPlatform;
let sql: pg.Client;
const kit = tenderKit(() => platform);

beforeAll(async () => {
  platform = await startTestPlatform();
  sql = new pg.Client({ connectionString: platform.databaseUrl });
  await sql.connect();
});

afterAll(async () => {
  await sql?.end();
  await platform?.close();
});

describe('the deadline, by the database clock', () => {
  it('accepts every bid that commits before the end and refuses every later one, under concurrent bids across the boundary', async () => {
    const buyer = await kit.party();
    const vendors: Party[] = [];
    for (let i = 0; i < 30; i++) vendors.push(await kit.vendor());
    const t = await kit.tender(buyer.key, { endInMs: 2000 });
    const end = new Date(t.tenderPeriod.endDate).getTime();
    const firstAt = end - 900;
    // One bid every 60 ms from 0.9 s before the deadline to 0.9 s after it, several in flight at once.
    const outcomes = await Promise.all(
      vendors.map(async (v, i) => {
        await sleep(Math.max(0, firstAt + i * 60 - Date.now()));
        const response = await kit.bid(v.key, t.id, { amount: 100 + i });
        const text = await response.text();
        return { status: response.status, json: JSON.parse(text) as { receipt?: ReceiptBody; error?: { code: string } }, i, answeredAt: Date.now() };
      }),
    );
    const accepted = outcomes.filter((o) => o.status === 201);
    const refused = outcomes.filter((o) => o.status !== 201);
    expect(accepted.length).toBeGreaterThan(0);
    expect(refused.length).toBeGreaterThan(0);
    for (const o of refused) expect([o.status, o.json.error?.code]).toEqual([409, 'tender_period_closed']);
    // The cut is one instant, the deadline: every accepted bid was recorded before it, and no bid was
    // refused before it (its answer came after). Firing order is no proxy: on a loaded host a bid
    // fired earlier can reach the database after one fired later.
    const seen = JSON.stringify(outcomes.map((o) => [o.i, o.status, o.answeredAt - end]));
    for (const o of accepted) expect(new Date(o.json.receipt!.recordedAt).getTime(), `bid ${o.i} of ${seen}`).toBeLessThan(end);
    for (const o of refused) expect(o.answeredAt, `bid ${o.i} of ${seen}`).toBeGreaterThanOrEqual(end);

    // What is stored agrees: exactly the accepted bids, all written before the deadline by the database clock.
    const stored = await sql.query(
      `select count(*)::int as n, bool_and(r."recorded_at" < t."tender_period_end") as before_end
         from "marketplace"."bid" b join "marketplace"."bid_receipt" r on r."bid_id" = b."id" join "marketplace"."tender" t on t."id" = b."tender_id"
        where b."tender_id" = $1`,
      [t.id],
    );
    expect(stored.rows[0]).toEqual({ n: accepted.length, before_end: true });
    const settled = await body<TenderBody>(await kit.api(`/tenders/${t.id}`, buyer.key), 200);
    expect(settled).toMatchObject({ status: 'EVALUATION', bidCount: accepted.length });
    expect((await body<{ data: unknown[] }>(await kit.api(`/tenders/${t.id}/bids?limit=100`, buyer.key), 200)).data).toHaveLength(accepted.length);
  });

  it('refuses a bid whose transaction passed the first check before the deadline but would commit after it, and one that got the lock after it', async () => {
    const buyer = await kit.party();
    const slow = await kit.vendor();
    const waiting = await kit.vendor();
    const t = await kit.tender(buyer.key, { endInMs: 1200 });
    // Slows the insert of one bid (amount 777) past the deadline, inside its transaction and under the tender's lock.
    await sql.query(`create or replace function "marketplace"."slow_bid"() returns trigger language plpgsql as $$ begin if new."amount" = 777 then perform pg_sleep(1.5); end if; return new; end $$`);
    await sql.query(`create trigger "slow_bid" before insert on "marketplace"."bid" for each row execute function "marketplace"."slow_bid"()`);
    try {
      const slowBid = kit.bid(slow.key, t.id, { amount: 777 });
      await sleep(300);
      // Sent before the deadline; it waits for the tender's row lock until after it.
      const lockedOut = kit.bid(waiting.key, t.id, { amount: 500 });
      await expectError(await slowBid, 409, 'tender_period_closed');
      await expectError(await lockedOut, 409, 'tender_period_closed');
    } finally {
      await sql.query(`drop trigger "slow_bid" on "marketplace"."bid"`);
    }
    const stored = await sql.query(`select count(*)::int as n from "marketplace"."bid" where "tender_id" = $1`, [t.id]);
    expect(stored.rows[0].n).toBe(0);
    const receipts = await sql.query(`select count(*)::int as n from "marketplace"."bid_receipt" r join "marketplace"."bid" b on b."id" = r."bid_id" where b."tender_id" = $1`, [t.id]);
    expect(receipts.rows[0].n).toBe(0);
    expect((await body<TenderBody>(await kit.api(`/tenders/${t.id}`, buyer.key), 200)).status).toBe('UNSUCCESSFUL');
  });
});
