import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { MikroORM } from '@mikro-orm/postgresql';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { buildSchema } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { customScalarSchemas } from '../../../edge/rest/openapi.js';
import { migrate, openOrm } from '../../../core/orm.js';
import { sharedIpEnricher } from '../../../subgraphs/traceroute/enrichment/ip-enricher.js';
import { readTextRecords } from '../../../subgraphs/traceroute/ingest/record-reader.js';
import { SyntheticTraceGenerator } from '../../../subgraphs/traceroute/ingest/synthetic-generator.js';
import { TraceImporter } from '../../../subgraphs/traceroute/ingest/trace-importer.js';
import { tracerouteOrmOptions } from '../../../subgraphs/traceroute/mikro-orm.config.js';
import { startTestPlatform, testConfig, type TestPlatform } from '../../support/platform-harness.js';

type Json = Record<string, unknown>;
type Document = {
  paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema: Json }> }> }>>;
  components: { schemas: Record<string, Json> };
};

// ajv-formats is CommonJS with `exports.default`: under NodeNext its default import is the module.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (ajv: Ajv) => Ajv;

/** Requests without a valid key allowed per minute from one address, low enough to reach here. */
const ANONYMOUS_LIMIT = 5;

let platform: TestPlatform;
let orm: MikroORM;
let liveKey: string;
let tracerouteKey: string;
const documents: Record<'membership' | 'traceroute', Document> = {} as never;

beforeAll(async () => {
  platform = await startTestPlatform({
    rateLimits: { ...testConfig().rateLimits, anonymousPerMinute: ANONYMOUS_LIMIT },
    // The webhook made below points at this machine; nothing is delivered to it.
    webhooks: { allowPrivateTargets: true, timeoutMs: 1000 },
  });
  orm = await openOrm({ clientUrl: platform.databaseUrl, ...tracerouteOrmOptions });
  await migrate(orm, platform.databaseUrl, tracerouteOrmOptions.schema);
  const generator = new SyntheticTraceGenerator(await sharedIpEnricher(), 7);
  await new TraceImporter(orm.em.fork(), await sharedIpEnricher()).store(generator.generate(40, { days: 2 }));
  liveKey = await platform.issueKey('contract', 'live');
  tracerouteKey = await platform.issueKey('contract', 'traceroute', { hourlyLimit: 10_000, dailyLimit: 10_000 });
}, 60_000);

afterAll(async () => {
  await orm?.close(true);
  await platform?.close();
});

/**
 * The OpenAPI 3.0 schema as JSON Schema for ajv: `nullable` becomes a union with null, references
 * point into the document, and objects take no property the document does not list (so a field
 * added to the API and not to the document fails too).
 */
function toJsonSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(toJsonSchema);
  if (!schema || typeof schema !== 'object') return schema;
  const { nullable, ...rest } = schema as Json;
  const converted: Json = Object.fromEntries(
    Object.entries(rest).map(([key, value]) => [
      key,
      key === '$ref' ? String(value).replace('#/components/schemas/', 'openapi.json#/components/schemas/') : key === 'properties' ? Object.fromEntries(Object.entries(value as Json).map(([k, v]) => [k, toJsonSchema(v)])) : toJsonSchema(value),
    ]),
  );
  if (converted.type === 'object' && converted.properties && converted.additionalProperties === undefined) converted.additionalProperties = false;
  return nullable ? { anyOf: [converted, { type: 'null' }] } : converted;
}

/** Checks responses against one document, by path template, method and status. */
class Contract {
  private readonly ajv = addFormats(new Ajv({ allErrors: true, strict: false }));
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor(private readonly document: Document) {
    this.ajv.addSchema({ $id: 'openapi.json', components: { schemas: toJsonSchema(document.components.schemas) } });
  }

  /** The errors of `body` against what the document says `method path` answers with `status`; [] when it matches. */
  errors(method: string, template: string, status: number, body: unknown, contentType = 'application/json'): string[] {
    const operation = this.document.paths[template]?.[method.toLowerCase()];
    if (!operation) return [`the document has no ${method} ${template}`];
    const response = operation.responses[String(status)] ?? operation.responses.default;
    const schema = response?.content?.[contentType]?.schema;
    if (!schema) return [`the document gives no ${contentType} body for ${status} on ${method} ${template}`];
    const id = `${method} ${template} ${status} ${contentType}`;
    let validate = this.compiled.get(id);
    if (!validate) this.compiled.set(id, (validate = this.ajv.compile(toJsonSchema(schema) as Json)));
    return validate(body) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message} ${JSON.stringify(e.params)}`);
  }
}

const contracts: Partial<Record<'membership' | 'traceroute', Contract>> = {};
/** `api method template` of every answer checked, so that a documented operation left unchecked shows. */
const checked = new Set<string>();

/** Sends a request and checks its answer against the document; returns the parsed body. */
async function call(
  api: 'membership' | 'traceroute',
  method: string,
  template: string,
  options: { params?: Record<string, string>; query?: string; json?: unknown; status: number; key?: string },
): Promise<Json> {
  const base = api === 'membership' ? '/api/v1' : '/v1/public';
  const concrete = template.replace(/\{(\w+)\}/g, (_, name: string) => options.params![name]);
  const response = await platform.request(`${base}${concrete}${options.query ? `?${options.query}` : ''}`, {
    method,
    json: options.json,
    ...(api === 'membership' ? { key: options.key ?? liveKey } : { headers: { 'x-api-key': tracerouteKey } }),
  });
  const text = await response.text();
  expect(response.status, text).toBe(options.status);
  const body = JSON.parse(text) as Json;
  checked.add(`${api} ${method.toLowerCase()} ${template}`);
  contracts[api] ??= new Contract(documents[api]);
  expect(contracts[api].errors(method, template, response.status, body), `${method} ${template} answered ${text.slice(0, 500)}`).toEqual([]);
  return body;
}

describe('the OpenAPI documents', () => {
  it('are served without a key, and a key sent anyway is not read', async () => {
    for (const [api, url] of [['membership', '/api/v1/openapi.json'], ['traceroute', '/v1/public/openapi.json']] as const) {
      const response = await platform.request(url);
      expect(response.status, await response.clone().text()).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
      // Counted like any client without a valid key: by address, at the anonymous limit.
      expect(response.headers.get('x-ratelimit-limit')).toBe(String(ANONYMOUS_LIMIT));
      documents[api] = (await response.json()) as Document;
    }
    expect((await platform.request('/api/v1/openapi.json', { key: 'sk_live_not_a_key' })).status).toBe(200);
  });

  it('exempt nothing else: the API itself still answers 401 without a key', async () => {
    const members = await platform.request('/api/v1/members');
    expect(members.status).toBe(401);
    expect(((await members.json()) as { error: { code: string } }).error.code).toBe('missing_api_key');
    expect((await platform.request('/api/v1/openapi.json', { method: 'POST' })).status).toBe(401);
  });

  it('stay under the anonymous rate limit', async () => {
    // Five requests without a valid key so far from this address: the sixth is refused.
    const response = await platform.request('/v1/public/openapi.json');
    expect(response.status).toBe(429);
    expect(response.headers.get('retry-after')).toMatch(/^\d+$/);
  });

  it('are valid OpenAPI 3.0 by a validator of the OpenAPI schemas, every reference resolved', async () => {
    for (const api of ['membership', 'traceroute'] as const) {
      const validator = new Validator();
      const result = await validator.validate(structuredClone(documents[api]));
      expect(result.errors, api).toBeUndefined();
      expect(result.valid, api).toBe(true);
      expect(validator.version).toMatch(/^3\.0/);
      const references = JSON.stringify(documents[api]).match(/#\/components\/schemas\/[\w.-]+/g) ?? [];
      for (const reference of new Set(references)) expect(documents[api].components.schemas, reference).toHaveProperty([reference.split('/').pop()!]);
    }
  });

  it('define every custom scalar, taken from the schema so that a new one is covered too', () => {
    const scalars = customScalarSchemas(
      buildSchema('scalar DateTime scalar LocalDate scalar JSONObject scalar Homegrown type Query { a: DateTime b: LocalDate c: JSONObject d: Homegrown }'),
    );
    expect(Object.keys(scalars).sort()).toEqual(['DateTime', 'Homegrown', 'JSONObject', 'LocalDate']);
    expect(scalars.LocalDate).toMatchObject({ type: 'string', format: 'date' });
    expect(scalars.JSONObject).toMatchObject({ type: 'object' });
    expect(documents.membership.components.schemas.LocalDate).toMatchObject({ type: 'string', format: 'date' });
    expect(documents.membership.components.schemas.DateTime).toMatchObject({ type: 'string', format: 'date-time' });
    expect(documents.traceroute.components.schemas.DateTime).toMatchObject({ type: 'string', format: 'date-time' });
  });

  it('are the ones the /docs pages show', async () => {
    for (const [api, url, auth] of [
      ['membership', '/api/v1/docs', { key: liveKey }],
      ['traceroute', '/v1/public/docs', { headers: { 'x-api-key': tracerouteKey } }],
    ] as const) {
      const response = await platform.request(url, auth);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^text\/html/);
      // Swagger UI's options, the document among them, are inlined as JSON into the page.
      const options = /SwaggerUIBundle\((\{[\s\S]*\})\)\}<\/script>/.exec(await response.text());
      expect(options, api).not.toBeNull();
      expect((JSON.parse(options![1]) as { spec: Document }).spec, api).toEqual(documents[api]);
    }
  });

  it('make the contract check fail on a body that drifts from them', () => {
    const contract = new Contract(documents.membership);
    const member = {
      id: 'm', name: 'A', email: 'a@example.org', phone: null, addressLine1: null, addressLine2: null, city: null, region: null, postalCode: null,
      country: null, customFields: {}, joinedOn: '2026-01-01', periodStart: '2026-01-01', periodEnd: '2027-01-01', createdAt: '2026-01-01T00:00:00.000Z',
      updatedAt: '2026-01-01T00:00:00.000Z', livemode: true, status: 'ACTIVE', categoryId: null, category: null,
    };
    const documented = (documents.membership.components.schemas.Member as { required: string[] }).required;
    const sample = Object.fromEntries(documented.map((name) => [name, (member as Json)[name] ?? null]));
    const baseline = contract.errors('GET', '/members/{id}', 200, sample);
    expect(contract.errors('GET', '/members/{id}', 200, { ...sample, name: 42 })).not.toEqual(baseline);
    expect(contract.errors('GET', '/members/{id}', 200, { ...sample, renamed_field: 'x' }).length).toBeGreaterThan(baseline.length);
    const { email: _email, ...missing } = sample;
    expect(contract.errors('GET', '/members/{id}', 200, missing).length).toBeGreaterThan(baseline.length);
  });
});

/** The date a year ago plus `days`: a member joined then has its period end within `days` days. */
function yearAgoPlus(days: number): string {
  const now = new Date();
  return new Date(Date.UTC(now.getUTCFullYear() - 1, now.getUTCMonth(), now.getUTCDate() + days)).toISOString().slice(0, 10);
}

describe('the membership REST paths answer as their document says', () => {
  it('members, invoices, payments, refunds and the finance report', async () => {
    const today = new Date().toISOString().slice(0, 10);
    const member = await call('membership', 'POST', '/members', { json: { name: 'Ada', email: 'ada@example.org', phone: '+49 30 1234567' }, status: 201 });
    const id = String(member.id);
    await call('membership', 'GET', '/members', { status: 200 });
    await call('membership', 'GET', '/members/{id}', { params: { id }, status: 200 });
    await call('membership', 'GET', '/members/{id}', { params: { id: '00000000-0000-4000-8000-ffffffffffff' }, status: 404 });
    await call('membership', 'PUT', '/members/{id}', { params: { id }, json: { phone: null, city: 'Berlin' }, status: 200 });
    const invoice = await call('membership', 'POST', '/invoices', {
      json: { memberId: id, currency: 'EUR', lines: [{ description: 'Dues', quantity: 2, unitAmount: 2500 }] },
      status: 201,
    });
    await call('membership', 'GET', '/invoices', { status: 200 });
    const payment = await call('membership', 'POST', '/payments', { json: { invoiceId: invoice.id, amount: 5000, method: 'CARD' }, status: 201 });
    await call('membership', 'POST', '/refunds', { json: { paymentId: payment.id, amount: 1000, reason: 'Duplicate' }, status: 201 });
    await call('membership', 'POST', '/payments', { json: { invoiceId: invoice.id, amount: 999_999, method: 'CARD' }, status: 400 });
    await call('membership', 'GET', '/finance/reports', { query: `from=${today}&to=${today}`, status: 200 });
    const csv = await platform.request(`/api/v1/finance/reports?from=${today}&to=${today}&format=csv`, { key: liveKey });
    expect(csv.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(documents.membership.paths['/finance/reports'].get.responses['200'].content).toHaveProperty('text/csv');
    await call('membership', 'POST', '/members/{id}/renew', { params: { id }, json: {}, status: 409 });
    const renewing = String((await call('membership', 'POST', '/members', { json: { name: 'Renewing', email: 'renewing@example.org', joinedOn: yearAgoPlus(10) }, status: 201 })).id);
    expect((await call('membership', 'GET', '/members', { query: 'renewalDue=true&sort=PERIOD_END_ASC', status: 200 })).data).toEqual([expect.objectContaining({ id: renewing })]);
    await call('membership', 'POST', '/members/{id}/renew', { params: { id: renewing }, json: {}, status: 200 });
    await call('membership', 'DELETE', '/members/{id}', { params: { id }, status: 200 });
  });

  it('events, attendees and check-in', async () => {
    const inHours = (h: number) => new Date(Date.now() + h * 3_600_000).toISOString();
    const event = await call('membership', 'POST', '/events', { json: { title: 'Meetup', startsAt: inHours(48), endsAt: inHours(50), timeZone: 'UTC' }, status: 201 });
    const id = String(event.id);
    await call('membership', 'GET', '/events', { status: 200 });
    await call('membership', 'GET', '/events/{id}', { params: { id }, status: 200 });
    expect(await call('membership', 'PUT', '/events/{id}', { params: { id }, json: { title: 'Meetup (moved)', capacity: 20, location: 'Hall 2' }, status: 200 })).toMatchObject({ title: 'Meetup (moved)', capacity: 20 });
    await call('membership', 'PUT', '/events/{id}', { params: { id }, json: { startsAt: inHours(-1) }, status: 400 });
    await call('membership', 'POST', '/events', { json: { title: 'Yesterday', startsAt: inHours(-24), endsAt: inHours(-22), timeZone: 'UTC' }, status: 400 });
    const attendee = await call('membership', 'POST', '/events/{id}/register', { params: { id }, json: { guestName: 'Ann', guestEmail: 'ann@example.org' }, status: 201 });
    await call('membership', 'GET', '/events/{id}/attendees', { params: { id }, status: 200 });
    await call('membership', 'POST', '/events/{id}/check-in', { params: { id }, json: { code: attendee.code }, status: 200 });
    const paid = String((await call('membership', 'POST', '/events', { json: { title: 'Gala', startsAt: inHours(48), endsAt: inHours(50), timeZone: 'UTC', price: 2500, currency: 'EUR', paymentTermHours: 24 }, status: 201 })).id);
    const payer = String((await call('membership', 'POST', '/members', { json: { name: 'Payer', email: 'payer.event@example.org' }, status: 201 })).id);
    const pending = await call('membership', 'POST', '/events/{id}/register', { params: { id: paid }, json: { memberId: payer }, status: 201 });
    expect(pending).toMatchObject({ status: 'PENDING', invoiceId: expect.any(String) });
    await call('membership', 'POST', '/events/{id}/register', { params: { id: paid }, json: { guestName: 'Walk In', guestEmail: 'walk.in@example.org' }, status: 400 });
    await call('membership', 'PUT', '/events/{id}', { params: { id: paid }, json: { price: 3000 }, status: 409 });
    await call('membership', 'POST', '/payments', { json: { invoiceId: pending.invoiceId, amount: 2500, method: 'CARD' }, status: 201 });
    await call('membership', 'POST', '/events/{id}/check-in', { params: { id: paid }, json: { attendeeId: pending.id }, status: 200 });
  });

  it('chat and jobs', async () => {
    const ann = String((await call('membership', 'POST', '/members', { json: { name: 'Ann', email: 'ann.chat@example.org' }, status: 201 })).id);
    const bob = String((await call('membership', 'POST', '/members', { json: { name: 'Bob', email: 'bob.chat@example.org' }, status: 201 })).id);
    await call('membership', 'POST', '/chat/send', { json: { asMember: ann, mode: 'DIRECT', to: bob, text: 'Hi Bob' }, status: 201 });
    await call('membership', 'GET', '/chat/messages', { query: `asMember=${ann}&withMember=${bob}`, status: 200 });
    await call('membership', 'GET', '/chat/channels', { query: `asMember=${ann}`, status: 200 });
    await call('membership', 'POST', '/chat/webhooks', { json: { url: 'http://127.0.0.1:9/hook', eventTypes: ['message.created'] }, status: 201 });
    const job = await call('membership', 'POST', '/jobs', { json: { postedBy: ann, title: 'Treasurer', description: 'Keeps the books.' }, status: 201 });
    await call('membership', 'GET', '/jobs', { status: 200 });
    await call('membership', 'GET', '/jobs/{id}', { params: { id: String(job.id) }, status: 200 });
  });

  it('jobs: lifecycle, applications and matching', async () => {
    const poster = String((await call('membership', 'POST', '/members', { json: { name: 'Poster', email: 'poster.jobs@example.org', headline: 'Hiring manager', skills: ['hiring'] }, status: 201 })).id);
    const ada = String((await call('membership', 'POST', '/members', { json: { name: 'Ada', email: 'ada.jobs@example.org', headline: 'Backend engineer', skills: ['TypeScript', 'SQL'], city: 'Leeds' }, status: 201 })).id);
    const draft = await call('membership', 'POST', '/jobs', { json: { postedBy: poster, title: 'Backend engineer', description: 'APIs in TypeScript.', status: 'DRAFT', skills: ['typescript', 'sql'], location: 'Leeds', employmentType: 'FULL_TIME', salaryMin: 40000, salaryMax: 60000, salaryCurrency: 'GBP' }, status: 201 });
    const jobId = String(draft.id);
    await call('membership', 'POST', '/jobs/{id}/apply', { params: { id: jobId }, json: { memberId: ada }, status: 409 });
    await call('membership', 'POST', '/jobs/{id}/publish', { params: { id: jobId }, json: {}, status: 200 });
    const application = await call('membership', 'POST', '/jobs/{id}/apply', { params: { id: jobId }, json: { memberId: ada, coverLetter: 'Hello', answers: [{ question: 'Start?', answer: 'May' }] }, status: 201 });
    const applicationId = String(application.id);
    await call('membership', 'POST', '/jobs/{id}/apply', { params: { id: jobId }, json: { memberId: ada }, status: 409 });
    await call('membership', 'GET', '/jobs/{id}/applicants', { params: { id: jobId }, status: 200 });
    await call('membership', 'GET', '/jobs/{id}/applicants', { params: { id: '00000000-0000-4000-8000-000000000000' }, status: 404 });
    await call('membership', 'GET', '/job-applications/{id}', { params: { id: applicationId }, status: 200 });
    await call('membership', 'POST', '/job-applications/{id}/move', { params: { id: applicationId }, json: { stage: 'INTERVIEW' }, status: 200 });
    await call('membership', 'POST', '/job-applications/{id}/reject', { params: { id: applicationId }, json: { reason: 'Filled internally' }, status: 200 });
    await call('membership', 'POST', '/job-applications/{id}/withdraw', { params: { id: applicationId }, json: {}, status: 409 });
    const outside = String((await call('membership', 'POST', '/jobs/{id}/apply', { params: { id: jobId }, json: { name: 'Out Side', email: 'out@example.org', resumeText: 'SQL' }, status: 201 })).id);
    await call('membership', 'POST', '/job-applications/{id}/withdraw', { params: { id: outside }, json: {}, status: 200 });
    const hired = String((await call('membership', 'POST', '/jobs/{id}/apply', { params: { id: jobId }, json: { memberId: ada }, status: 201 })).id);
    await call('membership', 'GET', '/jobs/match', { query: `memberId=${ada}`, status: 200 });
    await call('membership', 'GET', '/jobs/match', { query: `jobId=${jobId}&limit=5`, status: 200 });
    await call('membership', 'GET', '/jobs/match', { status: 400 });
    await call('membership', 'POST', '/job-applications/{id}/hire', { params: { id: hired }, json: { fillPosting: true }, status: 200 });
    const other = String((await call('membership', 'POST', '/jobs', { json: { postedBy: poster, title: 'Other', description: 'd' }, status: 201 })).id);
    await call('membership', 'POST', '/jobs/{id}/close', { params: { id: other }, json: { reason: 'Budget' }, status: 200 });
  });

  it('tenders: vendors, sealed bids, receipts, changed terms, awards', async () => {
    const vendorKey = await platform.issueKey('contract-vendor', 'live');
    const adminKey = await platform.issueKey('contract-ops', 'admin');
    const vendor = await call('membership', 'POST', '/vendors', { key: vendorKey, json: { name: 'Acme', country: 'DE', registrationNumber: 'HRB 1', contactEmail: 'sales@acme.example', categories: ['roads'] }, status: 201 });
    const vendorId = String(vendor.id);
    await call('membership', 'GET', '/vendors', { status: 200 });
    await call('membership', 'GET', '/vendors/{id}', { params: { id: vendorId }, status: 200 });
    const qualified = await platform.request('/graphql', { method: 'POST', key: adminKey, json: { query: `mutation { qualifyVendor(id: "${vendorId}", status: APPROVED) { status } }` } });
    expect(await qualified.json()).toEqual({ data: { qualifyVendor: { status: 'APPROVED' } } });
    const endDate = new Date(Date.now() + 3000).toISOString();
    const terms = { description: 'Resurface the road.', value: { amount: 1000, currency: 'EUR' }, tenderPeriod: { endDate } };
    const awarded = String((await call('membership', 'POST', '/tenders', { json: { title: 'Road', ...terms, publish: true }, status: 201 })).id);
    const cancelledAward = String((await call('membership', 'POST', '/tenders', { json: { title: 'Bridge', ...terms, publish: true }, status: 201 })).id);
    const draft = String((await call('membership', 'POST', '/tenders', { json: { title: 'Draft', ...terms }, status: 201 })).id);
    await call('membership', 'GET', '/tenders', { status: 200 });
    const spec = await platform.request('/api/v1/documents/upload', { method: 'POST', key: liveKey, json: { filename: 'spec.txt', content: Buffer.from('Road specification').toString('base64') } });
    const specId = String(((await spec.json()) as Json).id);
    const documented = String((await call('membership', 'POST', '/tenders', { json: { title: 'Documented', ...terms, documents: [specId], publish: true }, status: 201 })).id);
    expect((await call('membership', 'GET', '/tenders/{id}/documents', { key: vendorKey, params: { id: documented }, status: 200 })).data).toEqual([expect.objectContaining({ id: specId, filename: 'spec.txt' })]);
    expect(await call('membership', 'GET', '/tenders/{id}/documents/{documentId}', { key: vendorKey, params: { id: documented, documentId: specId }, status: 200 })).toMatchObject({ contentBase64: Buffer.from('Road specification').toString('base64') });
    await call('membership', 'GET', '/tenders/{id}/documents/{documentId}', { key: vendorKey, params: { id: documented, documentId: vendorId }, status: 404 });
    await call('membership', 'GET', '/tenders/{id}/documents', { key: await platform.issueKey('contract-outsider', 'live'), params: { id: documented }, status: 403 });
    expect(await call('membership', 'GET', '/tenders/{id}/ocds', { key: vendorKey, params: { id: documented }, status: 200 })).toMatchObject({ version: '1.1', releases: [expect.objectContaining({ initiationType: 'tender' })] });
    await call('membership', 'GET', '/tenders/{id}/ocds', { key: vendorKey, params: { id: draft }, status: 404 });
    await call('membership', 'GET', '/tenders/{id}', { params: { id: awarded }, status: 200 });
    await call('membership', 'POST', '/tenders/{id}/publish', { params: { id: draft }, json: {}, status: 200 });
    await call('membership', 'POST', '/tenders/{id}/cancel', { params: { id: draft }, json: { reason: 'Not needed' }, status: 200 });
    const placed = await call('membership', 'POST', '/tenders/{id}/bid', { key: vendorKey, params: { id: awarded }, json: { amount: 900, currency: 'EUR' }, status: 201 });
    const bidId = String((placed.bid as Json).id);
    await call('membership', 'POST', '/tenders/{id}/bid', { key: vendorKey, params: { id: awarded }, json: { amount: 2000, currency: 'EUR' }, status: 400 });
    await call('membership', 'GET', '/tenders/{id}/bids', { key: vendorKey, params: { id: awarded }, status: 200 });
    await call('membership', 'GET', '/tenders/{id}/bids', { params: { id: awarded }, status: 403 });
    await call('membership', 'GET', '/bids/{id}', { key: vendorKey, params: { id: bidId }, status: 200 });
    const amended = await call('membership', 'PUT', '/bids/{id}', { key: vendorKey, params: { id: bidId }, json: { amount: 850 }, status: 200 });
    await call('membership', 'GET', '/bid-receipts/{id}', { key: vendorKey, params: { id: String((amended.receipt as Json).id) }, status: 200 });
    await call('membership', 'PUT', '/tenders/{id}', { params: { id: awarded }, json: { value: { amount: 950, currency: 'EUR' } }, status: 200 });
    await call('membership', 'POST', '/bids/{id}/confirm', { key: vendorKey, params: { id: bidId }, json: {}, status: 200 });
    const other = await call('membership', 'POST', '/tenders/{id}/bid', { key: vendorKey, params: { id: cancelledAward }, json: { amount: 700, currency: 'EUR' }, status: 201 });
    await call('membership', 'POST', '/bids/{id}/withdraw', { key: vendorKey, params: { id: String((other.bid as Json).id) }, json: {}, status: 200 });
    await call('membership', 'POST', '/tenders/{id}/bid', { key: vendorKey, params: { id: cancelledAward }, json: { amount: 650, currency: 'EUR' }, status: 201 });
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, new Date(endDate).getTime() + 100 - Date.now())));
    await call('membership', 'PUT', '/tenders/{id}/award', { params: { id: awarded }, json: {}, status: 200 });
    await call('membership', 'POST', '/tenders/{id}/complete', { params: { id: awarded }, json: {}, status: 200 });
    await call('membership', 'PUT', '/tenders/{id}/award', { params: { id: cancelledAward }, json: {}, status: 200 });
    await call('membership', 'POST', '/tenders/{id}/award/cancel', { params: { id: cancelledAward }, json: { reason: 'Vendor declined' }, status: 200 });
  });

  it('document categories', async () => {
    await call('membership', 'GET', '/documents/categories', { status: 200 });
    const category = await call('membership', 'POST', '/documents/categories', { json: { name: 'Contract check', rules: [{ kind: 'ANY', pattern: 'checked' }] }, status: 201 });
    const id = String(category.id);
    await call('membership', 'POST', '/documents/categories', { json: { name: 'contract CHECK' }, status: 409 });
    await call('membership', 'GET', '/documents/categories/{id}', { params: { id }, status: 200 });
    await call('membership', 'PUT', '/documents/categories/{id}', { params: { id }, json: { rules: [{ kind: 'REGEX', pattern: '(a+)+' }] }, status: 400 });
    await call('membership', 'PUT', '/documents/categories/{id}', { params: { id }, json: { name: 'Contract checked', rules: [] }, status: 200 });
    await call('membership', 'DELETE', '/documents/categories/{id}', { params: { id }, status: 200 });
    await call('membership', 'GET', '/documents/categories/{id}', { params: { id }, status: 404 });
  });
  it('documents: upload, list, metadata, extract, classify, category, trash, restore, download and the upload ticket', async () => {
    const content = Buffer.from(`Contract check document ${Date.now()}: the annual regatta budget.`).toString('base64');
    const created = await call('membership', 'POST', '/documents/upload', { json: { filename: 'check.txt', content, tags: ['contract'] }, status: 201 });
    const id = String(created.id);
    await call('membership', 'POST', '/documents/upload', { json: { filename: 'again.txt', content }, status: 409 });
    for (let i = 0; i < 200; i++) {
      const response = await platform.request(`/api/v1/documents/${id}/extract`, { key: liveKey });
      await response.text();
      if (response.status !== 202) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await call('membership', 'GET', '/documents/{id}/extract', { params: { id }, status: 200 });
    await call('membership', 'GET', '/documents/{id}/classify', { params: { id }, status: 200 });
    await call('membership', 'GET', '/documents', { query: 'q=regatta', status: 200 });
    await call('membership', 'GET', '/documents/{id}', { params: { id }, status: 200 });
    await call('membership', 'PUT', '/documents/{id}/category', { params: { id }, json: { category: 'contract' }, status: 200 });
    await call('membership', 'DELETE', '/documents/{id}', { params: { id }, status: 200 });
    await call('membership', 'POST', '/documents/{id}/restore', { params: { id }, status: 200 });
    await call('membership', 'GET', '/documents/{id}', { params: { id: '00000000-0000-4000-8000-ffffffffffff' }, status: 404 });

    // The byte paths answer bytes, not JSON: their status and type are what the document says.
    const download = await platform.request(`/api/v1/documents/${id}/download`, { key: liveKey });
    expect(download.status).toBe(200);
    expect(Buffer.from(await download.arrayBuffer()).toString('base64')).toBe(content);
    expect(documents.membership.paths['/documents/{id}/download'].get.responses['200'].content).toHaveProperty('application/octet-stream');
    checked.add('membership get /documents/{id}/download');
    const ticket = (await (
      await platform.request('/graphql', { method: 'POST', key: liveKey, json: { query: 'mutation { createDocumentUpload(filename: "ticket.txt") { uploadId } }' } })
    ).json()) as { data: { createDocumentUpload: { uploadId: string } } };
    const put = await platform.request(`/api/v1/documents/uploads/${ticket.data.createDocumentUpload.uploadId}`, { method: 'PUT', key: liveKey, body: 'ticket bytes', headers: { 'content-type': 'application/octet-stream' } });
    const staged = (await put.json()) as Json;
    expect(put.status).toBe(200);
    contracts.membership ??= new Contract(documents.membership);
    expect(contracts.membership.errors('PUT', '/documents/uploads/{id}', 200, staged)).toEqual([]);
    checked.add('membership put /documents/uploads/{id}');
  });
});

describe('what GraphQL clients can do, over REST too, as the document says', () => {
  it('member categories and the member lifecycle', async () => {
    const category = await call('membership', 'POST', '/member-categories', { json: { name: 'Regular', feeAmount: 5000, currency: 'EUR', period: 'YEARLY' }, status: 201 });
    const categoryId = String(category.id);
    await call('membership', 'GET', '/member-categories', { status: 200 });
    await call('membership', 'GET', '/member-categories/{id}', { params: { id: categoryId }, status: 200 });
    await call('membership', 'GET', '/member-categories/{id}', { params: { id: '00000000-0000-4000-8000-ffffffffffff' }, status: 404 });
    const member = await call('membership', 'POST', '/members', { json: { name: 'Life Cycle', email: 'lifecycle@example.org', categoryId }, status: 201 });
    const id = String(member.id);
    expect(member.status).toBe('PENDING');
    expect((await call('membership', 'POST', '/members/{id}/activate', { params: { id }, status: 200 })).status).toBe('ACTIVE');
    expect((await call('membership', 'POST', '/members/{id}/suspend', { params: { id }, status: 200 })).status).toBe('SUSPENDED');
    expect((await call('membership', 'POST', '/members/{id}/reinstate', { params: { id }, status: 200 })).status).toBe('ACTIVE');
    expect((await call('membership', 'POST', '/members/{id}/cancel', { params: { id }, status: 200 })).status).toBe('CANCELLED');
    await call('membership', 'POST', '/members/{id}/reinstate', { params: { id }, status: 409 });
    const renamed = await call('membership', 'PUT', '/member-categories/{id}', { params: { id: categoryId }, json: { name: 'Regular (2027)', feeAmount: 5500 }, status: 200 });
    expect(renamed).toMatchObject({ name: 'Regular (2027)', feeAmount: 5500, period: 'YEARLY' });
    // Members and invoices name it: kept.
    await call('membership', 'DELETE', '/member-categories/{id}', { params: { id: categoryId }, status: 409 });
    const unused = String((await call('membership', 'POST', '/member-categories', { json: { name: 'Unused', feeAmount: 0, currency: 'EUR', period: 'LIFETIME' }, status: 201 })).id);
    await call('membership', 'DELETE', '/member-categories/{id}', { params: { id: unused }, status: 200 });
    await call('membership', 'GET', '/member-categories/{id}', { params: { id: unused }, status: 404 });
  });

  it('invoices one by one, their actions, payments and refunds', async () => {
    const memberId = String((await call('membership', 'POST', '/members', { json: { name: 'Payer', email: 'payer@example.org' }, status: 201 })).id);
    const line = { description: 'Dues', unitAmount: 1000 };
    const draft = String((await call('membership', 'POST', '/invoices', { json: { memberId, currency: 'EUR', lines: [line], status: 'DRAFT' }, status: 201 })).id);
    await call('membership', 'GET', '/invoices/{id}', { params: { id: draft }, status: 200 });
    await call('membership', 'GET', '/invoices/{id}', { params: { id: '00000000-0000-4000-8000-ffffffffffff' }, status: 404 });
    expect((await call('membership', 'POST', '/invoices/{id}/finalize', { params: { id: draft }, status: 200 })).status).toBe('OPEN');
    expect((await call('membership', 'POST', '/invoices/{id}/void', { params: { id: draft }, status: 200 })).status).toBe('VOID');
    const open = String((await call('membership', 'POST', '/invoices', { json: { memberId, currency: 'EUR', lines: [line] }, status: 201 })).id);
    expect((await call('membership', 'POST', '/invoices/{id}/mark-uncollectible', { params: { id: open }, status: 200 })).status).toBe('UNCOLLECTIBLE');
    const doomed = String((await call('membership', 'POST', '/invoices', { json: { memberId, currency: 'EUR', lines: [line], status: 'DRAFT' }, status: 201 })).id);
    await call('membership', 'DELETE', '/invoices/{id}', { params: { id: doomed }, status: 200 });
    await call('membership', 'DELETE', '/invoices/{id}', { params: { id: open }, status: 409 });
    const paid = String((await call('membership', 'POST', '/invoices', { json: { memberId, currency: 'EUR', lines: [line] }, status: 201 })).id);
    const payment = String((await call('membership', 'POST', '/payments', { json: { invoiceId: paid, amount: 1000, method: 'CARD' }, status: 201 })).id);
    const refund = String((await call('membership', 'POST', '/refunds', { json: { paymentId: payment, amount: 100 }, status: 201 })).id);
    await call('membership', 'GET', '/payments', { query: `invoiceId=${paid}`, status: 200 });
    await call('membership', 'GET', '/payments/{id}', { params: { id: payment }, status: 200 });
    await call('membership', 'GET', '/refunds', { query: `paymentId=${payment}`, status: 200 });
    await call('membership', 'GET', '/refunds/{id}', { params: { id: refund }, status: 200 });
    await call('membership', 'GET', '/audit-events', { query: 'limit=5', status: 200 });
  });

  it('event and registration cancellation', async () => {
    const inHours = (h: number) => new Date(Date.now() + h * 3_600_000).toISOString();
    const id = String((await call('membership', 'POST', '/events', { json: { title: 'Cancelled', startsAt: inHours(48), endsAt: inHours(50), timeZone: 'UTC' }, status: 201 })).id);
    const attendee = await call('membership', 'POST', '/events/{id}/register', { params: { id }, json: { guestName: 'Cy', guestEmail: 'cy@example.org' }, status: 201 });
    await call('membership', 'POST', '/events/{id}/attendees/{attendeeId}/cancel', { params: { id, attendeeId: String(attendee.id) }, status: 200 });
    await call('membership', 'POST', '/events/{id}/cancel', { params: { id }, status: 200 });
    await call('membership', 'POST', '/events/{id}/register', { params: { id }, json: { guestName: 'Di', guestEmail: 'di@example.org' }, status: 409 });
  });

  it('chat channels, messages and webhooks', async () => {
    const ann = String((await call('membership', 'POST', '/members', { json: { name: 'Ann', email: 'ann.channels@example.org' }, status: 201 })).id);
    const bob = String((await call('membership', 'POST', '/members', { json: { name: 'Bob', email: 'bob.channels@example.org' }, status: 201 })).id);
    const channel = String((await call('membership', 'POST', '/chat/channels', { json: { asMember: ann, name: 'board' }, status: 201 })).id);
    await call('membership', 'GET', '/chat/channels/{id}', { params: { id: channel }, query: `asMember=${ann}`, status: 200 });
    await call('membership', 'POST', '/chat/channels/{channelId}/join', { params: { channelId: channel }, json: { asMember: bob }, status: 200 });
    const sent = await call('membership', 'POST', '/chat/send', { json: { asMember: bob, mode: 'CHANNEL', channelId: channel, text: 'Hello board' }, status: 201 });
    const message = String(sent.id);
    await call('membership', 'GET', '/chat/messages/{id}', { params: { id: message }, query: `asMember=${ann}`, status: 200 });
    await call('membership', 'PUT', '/chat/messages/{id}', { params: { id: message }, json: { asMember: bob, text: 'Hello, board' }, status: 200 });
    await call('membership', 'DELETE', '/chat/messages/{id}', { params: { id: message }, query: `asMember=${bob}`, status: 200 });
    await call('membership', 'POST', '/chat/channels/{channelId}/leave', { params: { channelId: channel }, json: { asMember: bob }, status: 200 });
    const webhook = await call('membership', 'POST', '/chat/webhooks', { json: { url: 'http://127.0.0.1:9/hooks', eventTypes: ['message.created'] }, status: 201 });
    await call('membership', 'GET', '/chat/webhooks', { status: 200 });
    const webhookId = String((webhook.webhook as Json).id);
    await call('membership', 'GET', '/chat/webhooks/{webhookId}/deliveries', { params: { webhookId }, status: 200 });
    await call('membership', 'GET', '/chat/webhooks/{id}', { params: { id: webhookId }, status: 200 });
    expect((await call('membership', 'POST', '/chat/webhooks/{id}/disable', { params: { id: webhookId }, status: 200 })).enabled).toBe(false);
    expect((await call('membership', 'POST', '/chat/webhooks/{id}/enable', { params: { id: webhookId }, status: 200 })).enabled).toBe(true);
    const rotated = await call('membership', 'POST', '/chat/webhooks/{id}/rotate-secret', { params: { id: webhookId }, json: { expireOldAfterHours: 2 }, status: 200 });
    expect(rotated.secret).toMatch(/^whsec_/);
    expect(rotated.secret).not.toBe(webhook.secret);
    await call('membership', 'DELETE', '/chat/webhooks/{id}', { params: { id: webhookId }, status: 200 });
    await call('membership', 'GET', '/chat/webhooks/{id}', { params: { id: webhookId }, status: 404 });
  });

  it('a document\'s title and tags', async () => {
    const content = Buffer.from(`Edited document ${Date.now()}`).toString('base64');
    const id = String((await call('membership', 'POST', '/documents/upload', { json: { filename: 'edit.txt', content, title: 'Draft minutes' }, status: 201 })).id);
    const edited = await call('membership', 'PUT', '/documents/{id}', { params: { id }, json: { title: 'Minutes of the annual meeting', tags: ['board', 'Board', 'minutes'] }, status: 200 });
    expect(edited).toMatchObject({ title: 'Minutes of the annual meeting', tags: ['board', 'minutes'] });
    await call('membership', 'PUT', '/documents/{id}', { params: { id: '00000000-0000-4000-8000-ffffffffffff' }, json: { title: 'x' }, status: 404 });
  });

  it('a vendor\'s own profile', async () => {
    const vendorKey = await platform.issueKey('contract-own-vendor', 'live');
    await call('membership', 'GET', '/vendors/me', { key: vendorKey, status: 404 });
    await call('membership', 'POST', '/vendors', { key: vendorKey, json: { name: 'Own', country: 'FR', registrationNumber: 'RCS 2', contactEmail: 'own@vendor.example', categories: ['roads'] }, status: 201 });
    await call('membership', 'GET', '/vendors/me', { key: vendorKey, status: 200 });
  });
});

describe('the traceroute REST paths answer as their document says, in snake_case', () => {
  it('search, one trace, stats and errors', async () => {
    const page = await call('traceroute', 'GET', '/traces', { query: 'limit=5&hours=720', status: 200 });
    const traces = page.data as Json[];
    expect(traces.length).toBeGreaterThan(0);
    expect(Object.keys(traces[0])).toEqual(expect.arrayContaining(['trace_id', 'measured_at', 'anomaly_score', 'probe_city']));
    await call('traceroute', 'GET', '/traces', { query: 'limit=3&hours=720&include_hops=true', status: 200 });
    const trace = await call('traceroute', 'GET', '/traces/{id}', { params: { id: String(traces[0].trace_id) }, status: 200 });
    expect(trace).toHaveProperty('hop_count');
    await call('traceroute', 'GET', '/traces/{id}', { params: { id: '00000000-0000-7000-8000-000000000000' }, status: 404 });
    await call('traceroute', 'GET', '/traces', { query: 'limit=abc', status: 400 });
    await call('traceroute', 'GET', '/stats', { query: 'hours=720', status: 200 });
    // A generated trace has no source record; an imported one has.
    await call('traceroute', 'GET', '/traces/{id}/raw', { params: { id: String(traces[0].trace_id) }, status: 404 });
    const record = readFileSync(path.resolve(import.meta.dirname, '../../fixtures/traceroute/ripe-atlas-quirks.jsonl'), 'utf8').split('\n')[0];
    await new TraceImporter(orm.em.fork(), await sharedIpEnricher()).run(readTextRecords(record));
    const imported = await call('traceroute', 'GET', '/traces', { query: 'msm_id=5004&since=2013-04-01T00:00:00Z&until=2013-04-02T00:00:00Z', status: 200 });
    const raw = await call('traceroute', 'GET', '/traces/{id}/raw', { params: { id: String((imported.data as Json[])[0].trace_id) }, status: 200 });
    expect(raw.record).toBe(record);
  });

  it('the export, streamed by its own handler, as the document describes it', async () => {
    const exported = await call('traceroute', 'GET', '/traces/export', { query: 'hours=720&limit=5', status: 200 });
    expect((exported.data as Json[]).length).toBeGreaterThan(0);
    await call('traceroute', 'GET', '/traces/export', { query: 'hours=720&limit=5&include_hops=false', status: 200 });
    await call('traceroute', 'GET', '/traces/export', { query: 'limit=0', status: 400 });
    const csv = await platform.request('/v1/public/traces/export?format=csv&hours=720&limit=2', { headers: { 'x-api-key': tracerouteKey } });
    expect(csv.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(documents.traceroute.paths['/traces/export'].get.responses['200'].content).toHaveProperty('text/csv');
  });
});

describe('the contract test itself', () => {
  it('checked every operation of both documents against a real answer', () => {
    const documented = (['membership', 'traceroute'] as const).flatMap((api) =>
      Object.entries(documents[api].paths).flatMap(([template, operations]) => Object.keys(operations).map((method) => `${api} ${method} ${template}`)),
    );
    expect(documented.length).toBeGreaterThan(25);
    expect(documented.filter((operation) => !checked.has(operation))).toEqual([]);
  });
});

describe('the documents as reading matter', () => {
  it('group every operation in an area, give each a summary that says what it does, and carry examples', () => {
    for (const api of ['membership', 'traceroute'] as const) {
      const document = documents[api] as Document & { tags: { name: string }[] };
      const areas = new Set(document.tags.map((tag) => tag.name));
      expect(areas.size).toBeGreaterThan(0);
      for (const [path, operations] of Object.entries(document.paths)) {
        for (const [method, operation] of Object.entries(operations) as [string, Json][]) {
          const where = `${api} ${method} ${path}`;
          expect(operation.tags, where).toHaveLength(1);
          expect(areas.has((operation.tags as string[])[0]), where).toBe(true);
          const summary = String(operation.summary);
          // Not the path again: words that say what the operation does.
          expect(summary, where).not.toMatch(/^(GET|POST|PUT|PATCH|DELETE) \//);
          expect(summary, where).toMatch(/^[A-Z]/);
          const content = (operation.responses as Record<string, { content?: Record<string, { example?: unknown }> }>)[Object.keys(operation.responses as Json).find((status) => /^2/.test(status))!]?.content;
          if (content?.['application/json'] && !path.includes('export')) expect(content['application/json'].example, `${where} response example`).toBeDefined();
          const body = (operation.requestBody as { content?: Record<string, { example?: unknown; schema?: Json }> } | undefined)?.content?.['application/json'];
          if (body?.schema && Object.keys((body.schema.properties as Json) ?? {}).length) expect(body.example, `${where} request example`).toBeDefined();
        }
      }
    }
  });

  it('whose examples are valid against their own schemas', () => {
    const contract = new Contract(documents.membership);
    for (const [template, operations] of Object.entries(documents.membership.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        for (const [status, response] of Object.entries(operation.responses)) {
          const example = (response.content?.['application/json'] as { example?: unknown } | undefined)?.example;
          if (example === undefined) continue;
          expect(contract.errors(method, template, Number(status), example), `${method} ${template} ${status}`).toEqual([]);
        }
      }
    }
  });
});
