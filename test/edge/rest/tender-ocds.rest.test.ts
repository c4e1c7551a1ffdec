import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import ajvDraft04Module from 'ajv-draft-04';
import type { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../platform/config.js';
import { startTestPlatform, type TestPlatform } from '../../support/platform-harness.js';
import { body, tenderKit, type TenderBody } from './tenders-support.js';

// ajv-draft-04 and ajv-formats are CommonJS with `exports.default`: under NodeNext their default import is the module.
const Ajv04 = ((ajvDraft04Module as unknown as { default?: unknown }).default ?? ajvDraft04Module) as new (options: object) => Ajv;
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (ajv: Ajv) => Ajv;

const fixture = (name: string) => readFileSync(fileURLToPath(new URL(`../../fixtures/ocds/${name}`, import.meta.url)), 'utf8');
/** The codes of one of OCDS's open codelists, from its CSV (the closed ones are enums in the schema). */
const codelist = (name: string) => new Set(fixture(`${name}.csv`).split('\n').slice(1).map((line) => line.match(/(?:^|,)([a-zA-Z]+),/)?.[1]).filter(Boolean));

const ajv = addFormats(new Ajv04({ allErrors: true, strict: false }));
ajv.addSchema(JSON.parse(fixture('release-schema.json')));
const validatePackage = ajv.compile(JSON.parse(fixture('release-package-schema.json')));
const AWARD_CRITERIA = codelist('awardCriteria');
const PARTY_ROLES = codelist('partyRole');
const DOCUMENT_TYPES = codelist('documentType');

const PREFIX = 'ocds-test01';
let platform: TestPlatform;
const kit = tenderKit(() => platform);

beforeAll(async () => {
  platform = await startTestPlatform({ ocds: { ocidPrefix: PREFIX, publisherName: 'Test publisher' } });
}, 60_000);
afterAll(async () => {
  await platform?.close();
});

type Release = {
  ocid: string;
  id: string;
  tag: string[];
  parties: { id: string; roles: string[]; name?: string }[];
  tender: Record<string, any>;
  awards?: Record<string, any>[];
  contracts?: Record<string, any>[];
};

/** GET /tenders/{id}/ocds, checked against the OCDS 1.1.5 release package schema and the open codelists; the release. */
async function released(key: string, tenderId: string): Promise<Release> {
  const pkg = await body<Record<string, any>>(await kit.api(`/tenders/${tenderId}/ocds`, key), 200);
  const valid = validatePackage(pkg);
  expect(valid, JSON.stringify(validatePackage.errors, null, 1)).toBe(true);
  expect(pkg).toMatchObject({ version: '1.1', publisher: { name: 'Test publisher' } });
  expect(pkg.releases).toHaveLength(1);
  const release = pkg.releases[0] as Release;
  expect(release.ocid).toBe(`${PREFIX}-${tenderId}`);
  expect(AWARD_CRITERIA.has(release.tender.awardCriteria)).toBe(true);
  for (const party of release.parties) for (const role of party.roles) expect(PARTY_ROLES.has(role), role).toBe(true);
  for (const document of release.tender.documents) expect(DOCUMENT_TYPES.has(document.documentType)).toBe(true);
  return release;
}

describe('GET /tenders/{id}/ocds', () => {
  it('is a valid OCDS 1.1.5 release package in every tender state, with the codelists’ values', async () => {
    const buyer = await kit.party();
    const [first, second] = [await kit.vendor(), await kit.vendor()];
    const states: Record<string, Release> = {};

    const draft = await kit.tender(buyer.key, { publish: false, json: { lots: [{ title: 'North', amount: 400 }, { title: 'South', amount: 500 }] } });
    states.DRAFT = await released(buyer.key, draft.id);
    await body(await kit.api(`/tenders/${draft.id}/ocds`, first.key), 404);

    const cancelled = await kit.tender(buyer.key);
    await body(await kit.api(`/tenders/${cancelled.id}/cancel`, buyer.key, { method: 'POST', json: { reason: 'No budget' } }), 200);
    states.CANCELLED = await released(first.key, cancelled.id);

    const unsuccessful = await kit.tender(buyer.key, { endInMs: 1500 });
    const contested = await kit.tender(buyer.key, { endInMs: 2500 });
    const active = await kit.tender(buyer.key, { endInMs: 60_000 });
    await kit.placed(first.key, contested.id, { amount: 900 });
    await kit.placed(second.key, contested.id, { amount: 800 });
    await kit.placed(first.key, active.id, { amount: 700 });
    await body(await kit.api(`/tenders/${active.id}`, buyer.key, { method: 'PUT', json: { value: { amount: 950, currency: 'EUR' } } }), 200);
    states.ACTIVE = await released(buyer.key, active.id);

    await kit.pastDeadline(unsuccessful);
    states.UNSUCCESSFUL = await released(first.key, unsuccessful.id);
    await kit.pastDeadline(contested);
    states.EVALUATION = await released(first.key, contested.id);
    await body(await kit.api(`/tenders/${contested.id}/award`, buyer.key, { method: 'PUT', json: {} }), 200);
    states.AWARDED = await released(second.key, contested.id);
    await body(await kit.api(`/tenders/${contested.id}/complete`, buyer.key, { method: 'POST', json: {} }), 200);
    states.COMPLETE = await released(first.key, contested.id);

    expect(Object.fromEntries(Object.entries(states).map(([state, r]) => [state, [r.tag, r.tender.status]]))).toEqual({
      DRAFT: [['planning'], 'planning'],
      CANCELLED: [['tenderCancellation'], 'cancelled'],
      ACTIVE: [['tenderAmendment'], 'active'],
      UNSUCCESSFUL: [['tenderUpdate'], 'unsuccessful'],
      EVALUATION: [['tender'], 'active'],
      AWARDED: [['award'], 'complete'],
      COMPLETE: [['award', 'contract'], 'complete'],
    });
    expect(states.DRAFT.tender.lots.map((lot: { title: string }) => lot.title)).toEqual(['North', 'South']);
    expect(states.ACTIVE.tender).toMatchObject({ procurementMethod: 'open', awardCriteria: 'priceOnly', value: { amount: 950, currency: 'EUR' } });
    // Sealed until the deadline: not even the buyer's package tells who bid or how many.
    expect(states.ACTIVE.tender).not.toHaveProperty('numberOfTenderers');
    expect(states.ACTIVE.tender).not.toHaveProperty('tenderers');
    expect(states.ACTIVE.parties.map((p) => p.roles)).toEqual([['buyer', 'procuringEntity']]);
    expect(states.ACTIVE).not.toHaveProperty('awards');
    // After it: the tenderers, then the award to the lowest bid and its supplier, then the contract.
    expect(states.EVALUATION.tender.numberOfTenderers).toBe(2);
    expect(states.EVALUATION.tender.tenderers.map((t: { id: string }) => t.id).sort()).toEqual([first.vendorId, second.vendorId].sort());
    expect(states.AWARDED.awards).toEqual([expect.objectContaining({ status: 'active', value: { amount: 800, currency: 'EUR' }, suppliers: [expect.objectContaining({ id: second.vendorId })] })]);
    expect(states.AWARDED.parties.find((p) => p.id === second.vendorId)?.roles).toEqual(['tenderer', 'supplier']);
    expect(states.COMPLETE.contracts).toEqual([expect.objectContaining({ awardID: states.AWARDED.awards![0].id, status: 'active' })]);
    expect(states.COMPLETE.id).not.toBe(states.AWARDED.id);
  });

  it('keeps today’s JSON at GET /tenders/{id} and answers 404 to who cannot see the tender', async () => {
    const buyer = await kit.party();
    const tender = await kit.tender(buyer.key);
    const plain = await body<TenderBody>(await kit.api(`/tenders/${tender.id}`, buyer.key), 200);
    expect(plain).toMatchObject({ id: tender.id, status: 'ACTIVE' });
    expect(plain).not.toHaveProperty('ocid');
    const sandbox = await kit.party('test', buyer.account);
    await body(await kit.api(`/tenders/${tender.id}/ocds`, sandbox.key), 404);
  });
});

describe('the bundled schema', () => {
  it('refuses what OCDS does not allow, so the checks above can fail', async () => {
    const buyer = await kit.party();
    const tender = await kit.tender(buyer.key);
    const pkg = await body<Record<string, any>>(await kit.api(`/tenders/${tender.id}/ocds`, buyer.key), 200);
    expect(validatePackage(pkg)).toBe(true);
    const release = pkg.releases[0];
    for (const broken of [
      { ...pkg, releases: [{ ...release, tender: { ...release.tender, status: 'evaluation' } }] },
      { ...pkg, releases: [{ ...release, tag: ['bidding'] }] },
      { ...pkg, version: '1.1.5' },
      { ...pkg, releases: [{ ...release, tender: { ...release.tender, value: { amount: 1, currency: 'EURO' } } }] },
    ]) {
      expect(validatePackage(broken)).toBe(false);
    }
  });
});

describe('OCDS_OCID_PREFIX', () => {
  it('is read by the configuration and refused unless it is "ocds-" and six characters', () => {
    const env = { NODE_ENV: 'test', DATA_DIR: '/tmp/platform-test-unused', INTERNAL_SECRET: 'x'.repeat(32) };
    expect(loadConfig(env).ocds).toEqual({ ocidPrefix: 'ocds-fp0000', publisherName: 'Federated platform' });
    expect(loadConfig({ ...env, OCDS_OCID_PREFIX: 'ocds-ab12cd', OCDS_PUBLISHER_NAME: 'City of Example' }).ocds).toEqual({ ocidPrefix: 'ocds-ab12cd', publisherName: 'City of Example' });
    expect(() => loadConfig({ ...env, OCDS_OCID_PREFIX: 'my-prefix' })).toThrow(/OCDS_OCID_PREFIX/);
  });
});
