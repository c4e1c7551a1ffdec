import OpenAI from 'openai';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { holdStream, LONG_GENERATION, openaiClient, startInferencePlatform, waitFor, type InferencePlatform } from './inference-test-kit.js';

/**
 * Usage records of calls through the interfaces, on a running platform: every call leaves one
 * record (written in batches, so the tests poll with a deadline) with the tokens the client was
 * told, where it went, how it ended and who made it. Keyed records are read through GraphQL as
 * the key's account (which sees nothing else); keyless ones from the table itself.
 */
let running: InferencePlatform;
let baseUrl: string;
let key: { id: string; secret: string };
let otherKey: { id: string; secret: string };
let db: pg.Client;
const since = new Date(Date.now() - 60_000);

beforeAll(async () => {
  running = await startInferencePlatform({}, { contextSize: 2048 });
  baseUrl = running.platform.baseUrl;
  key = await running.platform.identity().createKey({ account: 'usage-acme', kind: 'text' });
  otherKey = await running.platform.identity().createKey({ account: 'usage-globex', kind: 'text' });
  db = new pg.Client({ connectionString: running.platform.databaseUrl });
  await db.connect();
}, 120_000);

afterAll(async () => {
  await db?.end();
  await running?.close();
});

interface Record {
  id: string;
  occurredAt: string;
  accountId: string | null;
  keyId: string | null;
  clientAddress: string | null;
  interface: string;
  provider: string;
  model: string;
  promptTokens: number;
  completionTokens: number;
  latencyMs: number;
  timeToFirstTokenMs: number | null;
  streamed: boolean;
  status: number;
  errorCode: string | null;
}

const FIELDS = 'id occurredAt accountId keyId clientAddress interface provider model promptTokens completionTokens latencyMs timeToFirstTokenMs streamed status errorCode';

async function graphql<T>(query: string, variables: { [name: string]: unknown }, secret: string): Promise<T> {
  const response = await running.platform.request('/graphql', { method: 'POST', key: secret, json: { query, variables } });
  const body = (await response.json()) as { data?: T; errors?: unknown[] };
  if (body.errors) throw new Error(JSON.stringify(body.errors));
  return body.data!;
}

/** The records the key's account sees, newest first. */
async function recordsOf(secret: string): Promise<Record[]> {
  const data = await graphql<{ inferenceUsage: { data: Record[] } }>(
    `query($from: DateTime!, $to: DateTime!) { inferenceUsage(from: $from, to: $to, limit: 100) { data { ${FIELDS} } } }`,
    { from: since.toISOString(), to: new Date(Date.now() + 3_600_000).toISOString() },
    secret,
  );
  return data.inferenceUsage.data;
}

/** Waits for the key's record matching `match` (records are written in batches). */
function recordOf(secret: string, what: string, match: (r: Record) => boolean): Promise<Record> {
  return waitFor(`the record of ${what}`, async () => (await recordsOf(secret)).find(match));
}

interface Row {
  id: string;
  account_id: string | null;
  key_id: string | null;
  client_address: string | null;
  interface: string;
  provider: string;
  model: string;
  prompt_tokens: number;
  completion_tokens: number;
  latency_ms: number;
  time_to_first_token_ms: number | null;
  streamed: boolean;
  status: number;
  error_code: string | null;
}

/** Waits for a row of the table matching `where` (SQL over inference.usage_record). */
function rowWhere(what: string, where: string, params: unknown[]): Promise<Row> {
  return waitFor(`the row of ${what}`, async () => (await db.query<Row>(`select * from inference.usage_record where ${where}`, params)).rows[0]);
}

const serviceT = () => openaiClient(baseUrl, '/inference/text', key.secret);
const HELLO = { model: 'tiny', messages: [{ role: 'user' as const, content: 'count the records' }], max_tokens: 6 };

describe('Service T with a key', () => {
  it('records a non-streamed call with the exact usage the client saw', async () => {
    const answer = await serviceT().chat.completions.create({ ...HELLO, seed: 11 });
    const usage = answer.usage!;
    const record = await recordOf(key.secret, 'the non-streamed call', (r) => !r.streamed && r.interface === 'SERVICE_T' && r.status === 200);
    expect(record).toMatchObject({
      keyId: key.id,
      accountId: expect.any(String),
      clientAddress: null,
      interface: 'SERVICE_T',
      provider: 'provider_a',
      model: 'tiny',
      promptTokens: usage.prompt_tokens,
      completionTokens: usage.completion_tokens,
      streamed: false,
      status: 200,
      errorCode: null,
    });
    expect(record.timeToFirstTokenMs).toEqual(expect.any(Number));
    expect(record.timeToFirstTokenMs!).toBeGreaterThanOrEqual(0);
    expect(record.latencyMs).toBeGreaterThanOrEqual(record.timeToFirstTokenMs!);
    expect(new Date(record.occurredAt).getTime()).toBeGreaterThan(since.getTime());
  });

  it('records a streamed call with the usage of its last chunk', async () => {
    const stream = await serviceT().chat.completions.create({ ...HELLO, stream: true, stream_options: { include_usage: true } });
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const part of stream) if (part.usage) usage = part.usage;
    expect(usage).toBeDefined();
    const record = await recordOf(key.secret, 'the stream', (r) => r.streamed && r.status === 200);
    expect(record).toMatchObject({
      keyId: key.id,
      interface: 'SERVICE_T',
      provider: 'provider_a',
      model: 'tiny',
      promptTokens: usage!.prompt_tokens,
      completionTokens: usage!.completion_tokens,
      streamed: true,
      status: 200,
      errorCode: null,
    });
    expect(record.timeToFirstTokenMs).toEqual(expect.any(Number));
  });

  it('records a refused call with its status and error code', async () => {
    const error = await serviceT()
      .chat.completions.create({ ...HELLO, model: 'no-such-model' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.NotFoundError);
    const record = await recordOf(key.secret, 'the refused call', (r) => r.model === 'no-such-model');
    expect(record).toMatchObject({ keyId: key.id, interface: 'SERVICE_T', status: 404, errorCode: 'model_not_found', promptTokens: 0, completionTokens: 0, timeToFirstTokenMs: null, streamed: false });
  });

  it("sums the account's calls in the summary", async () => {
    const records = await recordsOf(key.secret);
    expect(records.length).toBeGreaterThanOrEqual(3);
    const data = await graphql<{ inferenceUsageSummary: { groups: { interface: string; requests: number; failed: number; promptTokens: number; completionTokens: number }[] } }>(
      'query($from: DateTime!, $to: DateTime!) { inferenceUsageSummary(from: $from, to: $to, groupBy: [INTERFACE]) { groups { interface requests failed promptTokens completionTokens } } }',
      { from: since.toISOString(), to: new Date(Date.now() + 3_600_000).toISOString() },
      key.secret,
    );
    const serviceTRecords = records.filter((r) => r.interface === 'SERVICE_T');
    const group = data.inferenceUsageSummary.groups.find((g) => g.interface === 'SERVICE_T');
    expect(group).toEqual({
      interface: 'SERVICE_T',
      requests: serviceTRecords.length,
      failed: serviceTRecords.filter((r) => r.status >= 400).length,
      promptTokens: serviceTRecords.reduce((sum, r) => sum + r.promptTokens, 0),
      completionTokens: serviceTRecords.reduce((sum, r) => sum + r.completionTokens, 0),
    });
  });

  it("shows an account its own calls only", async () => {
    await openaiClient(baseUrl, '/inference/text', otherKey.secret).chat.completions.create(HELLO);
    const theirs = await waitFor('the other account to see its call', async () => {
      const records = await recordsOf(otherKey.secret);
      return records.length > 0 ? records : undefined;
    });
    for (const record of theirs) expect(record.keyId).toBe(otherKey.id);
    for (const record of await recordsOf(key.secret)) expect(record.keyId).toBe(key.id);
  });
});

describe('keyless calls', () => {
  const gateway = () => openaiClient(baseUrl, '/inference/gateway');

  it('carry the client address and no key or account, with the exact usage', async () => {
    const answer = await gateway().completions.create({ model: 'tiny', prompt: 'gateway call', max_tokens: 5, provider: 'provider_c' } as never);
    const usage = (answer as unknown as OpenAI.Completion).usage!;
    const row = await rowWhere('the gateway call', `interface = 'gateway' and provider = 'provider_c' and status = 200 and not streamed and prompt_tokens = $1`, [usage.prompt_tokens]);
    expect(row).toMatchObject({
      key_id: null,
      account_id: null,
      provider: 'provider_c',
      model: 'tiny',
      prompt_tokens: usage.prompt_tokens,
      completion_tokens: usage.completion_tokens,
      streamed: false,
      status: 200,
      error_code: null,
    });
    expect(row.client_address).toMatch(/^(::ffff:)?127\.0\.0\.1$/);
    expect(row.time_to_first_token_ms).toEqual(expect.any(Number));
    // An account never sees keyless calls.
    for (const record of await recordsOf(key.secret)) expect(record.interface).not.toBe('GATEWAY');
  });

  it('records a streamed gateway call and its chosen provider', async () => {
    const stream = await gateway().chat.completions.create({ ...HELLO, stream: true, stream_options: { include_usage: true }, provider: 'provider_d' } as never);
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const part of stream as unknown as AsyncIterable<OpenAI.ChatCompletionChunk>) if (part.usage) usage = part.usage;
    const row = await rowWhere('the gateway stream', `interface = 'gateway' and provider = 'provider_d' and streamed`, []);
    expect(row).toMatchObject({ status: 200, key_id: null, prompt_tokens: usage!.prompt_tokens, completion_tokens: usage!.completion_tokens });
  });

  it('records a proxy call refused for an unknown model, by client address', async () => {
    const error = await openaiClient(baseUrl, '/inference/proxy')
      .chat.completions.create({ ...HELLO, model: 'proxy-nowhere' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.NotFoundError);
    const row = await rowWhere('the refused proxy call', `model = 'proxy-nowhere'`, []);
    expect(row).toMatchObject({ interface: 'proxy', status: 404, error_code: 'model_not_found', key_id: null, account_id: null, time_to_first_token_ms: null });
    expect(row.client_address).toMatch(/127\.0\.0\.1$/);
  });

  it('records a tokenize call with its count', async () => {
    const response = await fetch(`${baseUrl}/inference/gateway/v1/tokenize`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'tiny', prompt: 'tokens to count here', provider: 'provider_b' }),
    });
    const { count } = (await response.json()) as { count: number };
    const row = await rowWhere('the tokenize call', `interface = 'gateway' and provider = 'provider_b' and completion_tokens = 0 and status = 200`, []);
    expect(row.prompt_tokens).toBe(count);
  });

  it('records a stream whose client went away as 499 client_closed', async () => {
    const held = await holdStream(gateway(), { ...LONG_GENERATION, max_tokens: 2000, provider: 'provider_a' });
    expect((await held.next()).done).toBe(false);
    held.abort();
    const row = await rowWhere('the abandoned stream', `interface = 'gateway' and provider = 'provider_a' and status = 499`, []);
    expect(row).toMatchObject({ error_code: 'client_closed', streamed: true, key_id: null });
    expect(row.time_to_first_token_ms).toEqual(expect.any(Number));
    expect(row.latency_ms).toBeGreaterThanOrEqual(row.time_to_first_token_ms!);
  });
});
