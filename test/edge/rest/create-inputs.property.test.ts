import fc from 'fast-check';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../support/platform-harness.js';

// Whatever a client sends to createMember and createInvoice, the answer is a success with the
// row stored, or a client error with nothing stored: never a 5xx, and the lists keep answering.

let platform: TestPlatform;
let db: pg.Client;
let key: string;
let memberIds: string[];
const NO_LIMIT = 1_000_000_000;
// Bounded so the file stays well under a minute on a shared machine.
// Kept small enough for the file to run in well under 30 s; FAST_CHECK_RUNS raises it locally.
const RUNS = Number(process.env.FAST_CHECK_RUNS ?? 60);

beforeAll(async () => {
  platform = await startTestPlatform({
    rateLimits: { livePerMinute: NO_LIMIT, testPerMinute: NO_LIMIT, inferencePerMinute: NO_LIMIT, anonymousPerMinute: NO_LIMIT },
  });
  key = await platform.issueKey('acct-create-inputs');
  db = new pg.Client({ connectionString: platform.databaseUrl });
  await db.connect();
  const made = await Promise.all(
    [0, 1].map(async (i) => (await (await request('POST', '/members', { name: `Seed ${i}`, email: `seed${i}@example.org` })).json()) as { id: string }),
  );
  memberIds = made.map((m) => m.id);
});

afterAll(async () => {
  await db?.end();
  await platform?.close();
});

function request(method: string, path: string, json?: unknown): Promise<Response> {
  return platform.request(`/api/v1${path}`, { method, key, json });
}

async function stored(table: 'member' | 'invoice', id: string): Promise<boolean> {
  const { rows } = await db.query(`select 1 from "membership"."${table}" where "id" = $1`, [id]);
  return rows.length === 1;
}

async function count(table: 'member' | 'invoice'): Promise<number> {
  const { rows } = await db.query<{ n: string }>(`select count(*) as n from "membership"."${table}"`);
  return Number(rows[0].n);
}

/** Sends `body`, and checks the answer against what was stored. */
async function createAndCheck(path: string, table: 'member' | 'invoice', body: unknown): Promise<void> {
  const before = await count(table);
  const response = await request('POST', path, body);
  const text = await response.text();
  const after = await count(table);
  expect(response.status, text).toBeLessThan(500);
  if (response.ok) {
    expect(after, text).toBe(before + 1);
    const { id } = JSON.parse(text) as { id: string };
    expect(await stored(table, id), text).toBe(true);
  } else {
    expect(after, text).toBe(before);
    expect(JSON.parse(text).error.code, text).toEqual(expect.any(String));
  }
  for (const list of ['/members?limit=100', '/invoices?limit=100', ...memberIds.map((id) => `/invoices?memberId=${id}&limit=100`)]) {
    const listed = await request('GET', list);
    expect(listed.status, `${list}: ${await listed.clone().text()}`).toBe(200);
  }
}

// Mostly what a client means to send, now and then anything: most inputs must reach the
// database, or the property says little about what is stored.
const mostly = <T, U>(valid: fc.Arbitrary<T>, hostile: fc.Arbitrary<U>) =>
  fc.oneof({ arbitrary: valid, weight: 8 }, { arbitrary: hostile, weight: 1 });
const maybe = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined, freq: 2 });

// Text as clients send it: ordinary, blank, long, unicode, NUL and lone surrogates.
const hostileText = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 20 }),
  fc.constantFrom('', ' ', '\u0000', 'a\u0000b', '\ud800', 'x\udfffy', '😀', '=1+1', 'Robert"); drop table member;--'),
  fc.string({ minLength: 190, maxLength: 600 }),
);
const words = fc.string({ unit: 'grapheme', minLength: 1, maxLength: 40 }).filter((t) => /\S/.test(t));
const text = mostly(words, hostileText);
const hostileInteger = fc.constantFrom(0, -1, 1_000_000, 100_000_000, -100_000_000, 2_147_483_647, -2_147_483_648, 2_147_483_648, 2 ** 53, 1.5, -0);
const date = mostly(
  fc.date({ min: new Date('1900-01-01'), max: new Date('2100-12-31'), noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10)),
  fc.oneof(
    fc.date({ min: new Date('0001-01-01'), max: new Date('9999-12-31'), noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10)),
    fc.constantFrom('2024-02-29', '2023-02-29', '0000-01-01', '9999-12-31', '10000-01-01', '2024-13-01', '2024-1-1', 'yesterday', ''),
  ),
);
const anyValue = fc.oneof(text, fc.integer(), hostileInteger, fc.boolean(), fc.constant(null), fc.double(), fc.constantFrom([], {}, [1], { a: { b: 1 } }));

const memberInput = fc.record(
  {
    name: text,
    email: mostly(fc.emailAddress(), fc.oneof(hostileText, fc.emailAddress().map((e) => `${e}\u0000`))),
    phone: maybe(mostly(fc.constantFrom('+49 30 1234567', '(555) 123-4567'), hostileText)),
    addressLine1: maybe(text),
    city: maybe(text),
    country: maybe(mostly(fc.constantFrom('de', 'US', 'PK'), hostileText)),
    postalCode: maybe(mostly(fc.stringMatching(/^[0-9A-Z -]{1,10}$/), hostileText)),
    joinedOn: maybe(date),
    categoryId: fc.oneof({ arbitrary: fc.constant(undefined), weight: 8 }, { arbitrary: fc.oneof(fc.uuid(), hostileText), weight: 1 }),
    customFields: maybe(
      mostly(
        fc.dictionary(fc.string({ minLength: 1, maxLength: 20 }), fc.oneof(words, fc.integer(), fc.boolean(), fc.constant(null)), { maxKeys: 5 }),
        fc.oneof(fc.dictionary(hostileText, anyValue, { maxKeys: 6 }), fc.dictionary(fc.string(), fc.constant(1), { minKeys: 51, maxKeys: 55 }), anyValue),
      ),
    ),
  },
  { requiredKeys: ['name', 'email'] },
);

const lineInput = fc.record(
  {
    description: text,
    quantity: maybe(mostly(fc.oneof({ arbitrary: fc.integer({ min: 1, max: 12 }), weight: 6 }, fc.integer({ min: 1, max: 1_000_000 })), fc.oneof(hostileInteger, fc.constant(null)))),
    unitAmount: mostly(fc.oneof({ arbitrary: fc.integer({ min: 0, max: 100_000 }), weight: 6 }, fc.integer({ min: -100_000_000, max: 100_000_000 })), hostileInteger),
  },
  { requiredKeys: ['description', 'unitAmount'] },
);

const invoiceInput = fc.record(
  {
    memberId: mostly(fc.constantFrom(0, 1), fc.oneof(fc.uuid(), hostileText)),
    currency: mostly(fc.constantFrom('EUR', 'usd', 'JPY'), hostileText),
    lines: mostly(
      fc.array(lineInput, { minLength: 1, maxLength: 4 }),
      fc.oneof(
        fc.constant([]),
        fc.array(fc.constant({ description: 'x', quantity: 1_000_000, unitAmount: 100_000_000 }), { minLength: 1, maxLength: 3 }),
        fc.constant([
          { description: 'a', quantity: 1_000_000, unitAmount: 100_000_000 },
          { description: 'b', quantity: 1_000_000, unitAmount: -100_000_000 },
        ]),
      ),
    ),
    dueOn: maybe(date),
    description: maybe(text),
    status: maybe(mostly(fc.constantFrom('DRAFT', 'OPEN'), fc.constantFrom('PAID', 'draft', ''))),
  },
  { requiredKeys: ['memberId', 'currency', 'lines'] },
);

describe('createMember and createInvoice over generated input', () => {
  it('stores a member exactly when it answers 2xx, and never answers 5xx', async () => {
    await fc.assert(fc.asyncProperty(memberInput, (input) => createAndCheck('/members', 'member', input)), {
      numRuns: RUNS,
      // Inputs that once answered 500, tried before the generated ones.
      examples: [
        [{ name: 'x\udfffy', email: 'a@example.org' }],
        [{ name: 'Ada', email: 'ada@example.org', joinedOn: '9999-12-31' }],
        [{ name: 'Ada', email: 'ada@example.org', joinedOn: '0001-01-01' }],
        [{ name: 'Ada', email: 'ada@example.org', customFields: { 'a\u0000': 1 } }],
      ],
    });
  });

  it('stores an invoice exactly when it answers 2xx, and never answers 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(invoiceInput, (input) =>
        createAndCheck('/invoices', 'invoice', { ...input, memberId: typeof input.memberId === 'number' ? memberIds[input.memberId] : input.memberId }),
      ),
      {
        numRuns: RUNS,
        examples: [
          [
            {
              memberId: 0,
              currency: 'EUR',
              lines: [
                { description: 'a', quantity: 1_000_000, unitAmount: 100_000_000 },
                { description: 'b', quantity: 1_000_000, unitAmount: -100_000_000 },
              ],
            },
          ],
          // Year 0000 passed the LocalDate scalar, and PostgreSQL refused it.
          [{ memberId: 0, currency: 'EUR', lines: [{ description: '!', unitAmount: 0 }], dueOn: '0000-01-01' }],
        ],
      },
    );
  });

  it('refuses a join date outside 1800-01-01 to 2999-12-31 with 400 naming joinedOn, storing nothing', async () => {
    const before = await count('member');
    for (const joinedOn of ['9999-12-31', '0001-01-01', '1799-12-31', '3000-01-01']) {
      const response = await request('POST', '/members', { name: 'Ada', email: `ada.${joinedOn}@example.org`, joinedOn });
      expect(response.status, joinedOn).toBe(400);
      expect((await response.json()).error).toMatchObject({ code: 'invalid_parameter', param: 'joinedOn' });
    }
    expect(await count('member')).toBe(before);
    for (const joinedOn of ['1800-01-01', '2999-12-31']) {
      expect((await request('POST', '/members', { name: 'Ada', email: `ada.${joinedOn}@example.org`, joinedOn })).status, joinedOn).toBe(201);
    }
  });

  it('refuses a date or instant outside years 0001 to 9999 with 400 naming it, storing nothing', async () => {
    const before = await count('invoice');
    for (const dueOn of ['0000-01-01', '0000-12-31']) {
      const response = await request('POST', '/invoices', { memberId: memberIds[0], currency: 'EUR', lines: [{ description: 'x', unitAmount: 100 }], dueOn });
      expect(response.status, dueOn).toBe(400);
      expect((await response.json()).error).toMatchObject({ code: 'invalid_parameter', param: 'dueOn' });
    }
    expect(await count('invoice')).toBe(before);
    const event = await request('POST', '/events', { title: 'Y0', startsAt: '0000-06-01T10:00:00Z', endsAt: '0000-06-01T12:00:00Z', timeZone: 'UTC' });
    expect(event.status).toBe(400);
    expect((await event.json()).error).toMatchObject({ code: 'invalid_parameter', param: 'startsAt' });
  });

  it('refuses lines that cancel out but each exceed what an invoice holds', async () => {
    const before = await count('invoice');
    const response = await request('POST', '/invoices', {
      memberId: memberIds[0],
      currency: 'EUR',
      lines: [
        { description: 'a', quantity: 1_000_000, unitAmount: 100_000_000 },
        { description: 'b', quantity: 1_000_000, unitAmount: -100_000_000 },
      ],
    });
    expect(response.status).toBe(400);
    expect((await response.json()).error).toMatchObject({ code: 'invalid_parameter', param: 'lines.0.unitAmount' });
    expect(await count('invoice')).toBe(before);
  });
});
