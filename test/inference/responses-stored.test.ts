import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { LoopbackOpenAiServer } from '../support/loopback-openai-server.js';
import type { TestPlatform } from '../support/platform-harness.js';
import { everyMount, loopbackEngines, openaiClient, startUpstreamPlatform } from './inference-test-kit.js';
import { lastGeneration } from './upstream-behaviour.js';

/**
 * Kept responses on the four mounts, with the official openai client over a loopback vLLM-format
 * upstream: retrieve answers what create answered, delete removes it, input_items lists the input
 * with ids, previous_response_id reaches the engine as the whole conversation, and a response is
 * seen only in the scope that made it (a keyed mount's account, or the keyless mounts together).
 */
let platform: TestPlatform;
let vllm: LoopbackOpenAiServer;
let textKey: string;
let otherKey: string;
let db: pg.Client;

const MODEL = 'vllm-model';
// Small, so that a test can pass it; the default is 1 MiB.
const MAX_INPUT_BYTES = 8192;
const REPLY = 'Hello, loopback world.';

beforeAll(async () => {
  vllm = await LoopbackOpenAiServer.start('vllm', [{ id: MODEL, contextLength: 4096 }]);
  ({ platform, textKey } = await startUpstreamPlatform({
    providers: [{ id: 'provider_a', name: 'A', engines: loopbackEngines(vllm.url, 'vllm', { tools: true }) }],
    interfaces: everyMount(['provider_a']),
    responses: { maxInputBytes: MAX_INPUT_BYTES },
  }));
  otherKey = await platform.issueKey('globex', 'text');
  db = new pg.Client({ connectionString: platform.databaseUrl });
  await db.connect();
}, 60_000);

afterAll(async () => {
  await db?.end();
  await platform?.close();
  await vllm?.close();
});

afterEach(() => {
  vllm.reset();
});

const MOUNTS = [
  { name: 'Service T', mount: '/inference/text', keyed: true },
  { name: 'Service I', mount: '/inference/image', keyed: true },
  { name: 'the proxy', mount: '/inference/proxy', keyed: false },
  { name: 'the gateway', mount: '/inference/gateway', keyed: false },
];

const clientOf = (mount: string, apiKey: string) => openaiClient(platform.baseUrl, mount, apiKey);

/** A GET's JSON body as sent, without the fields the openai client adds (output_text, _request_id). */
async function getJson(mount: string, apiKey: string, path: string): Promise<Record<string, unknown>> {
  const res = await fetch(`${platform.baseUrl}${mount}/v1${path}`, { headers: { authorization: `Bearer ${apiKey}` } });
  expect(res.status).toBe(200);
  return (await res.json()) as Record<string, unknown>;
}

describe.each(MOUNTS)('$name', ({ mount, keyed }) => {
  const keyOf = () => (keyed ? textKey : 'unused');
  const client = () => clientOf(mount, keyOf());

  it('keeps a response: retrieve answers what create did, and delete removes it', async () => {
    const created = await client().responses.create({ model: MODEL, instructions: 'Be brief.', input: 'Say hello', metadata: { run: 'kept' } });
    expect((created as { store?: boolean }).store).toBe(true);
    const retrieved = await client().responses.retrieve(created.id);
    expect(retrieved).toEqual(created);
    await expect(client().responses.delete(created.id)).resolves.toEqual({ id: created.id, object: 'response', deleted: true });
    await expect(client().responses.retrieve(created.id)).rejects.toMatchObject({ status: 404, code: 'response_not_found' });
    await expect(client().responses.delete(created.id)).rejects.toMatchObject({ status: 404, code: 'response_not_found' });
  });

  it('keeps a streamed response as its response.completed event carried it', async () => {
    const stream = client().responses.stream({ model: MODEL, input: 'Say hello' });
    let completed: unknown;
    for await (const event of stream) if (event.type === 'response.completed') completed = event.response;
    const final = await stream.finalResponse();
    expect(final.output_text).toBe(REPLY);
    const retrieved = await getJson(mount, keyOf(), `/responses/${final.id}`);
    expect(retrieved).toEqual(completed);
    expect(retrieved.store).toBe(true);
  });

  it('does not keep a response asked with store: false', async () => {
    const created = await client().responses.create({ model: MODEL, input: 'Say hello', store: false });
    expect((created as { store?: boolean }).store).toBe(false);
    await expect(client().responses.retrieve(created.id)).rejects.toMatchObject({ status: 404, code: 'response_not_found' });
    const rows = await db.query('select 1 from "inference"."stored_response" where "id" = $1', [created.id]);
    expect(rows.rowCount).toBe(0);
  });

  it('lists the input items with ids, newest first by default, in pages', async () => {
    const input = [
      { role: 'user' as const, content: 'One' },
      { type: 'message' as const, role: 'assistant' as const, content: [{ type: 'output_text' as const, text: 'Two', annotations: [] }] },
      { role: 'user' as const, content: [{ type: 'input_text' as const, text: 'Three' }] },
    ];
    const created = await client().responses.create({ model: MODEL, input: input as never });
    const all = await client().responses.inputItems.list(created.id);
    expect(all.data.map((item) => (item as { content: { text: string }[] }).content[0]!.text)).toEqual(['Three', 'Two', 'One']);
    expect(all.data.every((item) => /^msg_[0-9a-f]{32}$/.test(item.id!))).toBe(true);
    expect(all.data[0]).toMatchObject({ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Three' }] });
    expect(await getJson(mount, keyOf(), `/responses/${created.id}/input_items`)).toEqual({ object: 'list', data: all.data, first_id: all.data[0]!.id, last_id: all.data[2]!.id, has_more: false });

    const page = await client().responses.inputItems.list(created.id, { order: 'asc', limit: 2 });
    expect(page.data.map((item) => item.id)).toEqual([all.data[2]!.id, all.data[1]!.id]);
    expect(page.has_more).toBe(true);
    const rest = await client().responses.inputItems.list(created.id, { order: 'asc', limit: 2, after: page.data[1]!.id });
    expect(rest.data.map((item) => item.id)).toEqual([all.data[0]!.id]);
    expect(rest.has_more).toBe(false);

    const bad = mount === '/inference/text' || mount === '/inference/gateway' ? 422 : 400;
    await expect(client().responses.inputItems.list(created.id, { limit: 101 })).rejects.toMatchObject({ status: bad, param: 'limit' });
    await expect(client().responses.inputItems.list(created.id, { include: ['message.input_image.image_url'] })).rejects.toMatchObject({ status: 400, code: 'unknown_parameter' });
    await expect(client().responses.cancel(created.id)).rejects.toMatchObject({ status: 400, param: 'response_id' });
  });

  it('continues a conversation with previous_response_id: the engine gets every turn, instructions only the new ones', async () => {
    const first = await client().responses.create({ model: MODEL, instructions: 'Old rules.', input: 'First' });
    const second = await client().responses.create({ model: MODEL, previous_response_id: first.id, input: 'Second' });
    expect(second.previous_response_id).toBe(first.id);
    await client().responses.create({ model: MODEL, instructions: 'New rules.', previous_response_id: second.id, input: 'Third' });
    expect(lastGeneration(vllm).body.messages).toEqual([
      { role: 'system', content: 'New rules.' },
      { role: 'user', content: 'First' },
      { role: 'assistant', content: REPLY },
      { role: 'user', content: 'Second' },
      { role: 'assistant', content: REPLY },
      { role: 'user', content: 'Third' },
    ]);
    await expect(client().responses.create({ model: MODEL, previous_response_id: 'resp_0000', input: 'x' })).rejects.toMatchObject({
      status: 400,
      code: 'previous_response_not_found',
      param: 'previous_response_id',
    });
  });

  it('keeps the answer of an input past responses.maxInputBytes, but not the input: item_reference finds its output, previous_response_id and input_items say why they cannot', async () => {
    const large = 'x'.repeat(MAX_INPUT_BYTES);
    const answered = await client().responses.create({ model: MODEL, input: large });
    expect((answered as unknown as { store: boolean }).store).toBe(true);
    const { rows } = await db.query<{ input_items: unknown }>(`select "input_items" from "inference"."stored_response" where "id" = $1`, [answered.id]);
    expect(rows).toEqual([{ input_items: null }]);
    expect(await getJson(mount, keyOf(), `/responses/${answered.id}`)).toMatchObject({ id: answered.id, output: answered.output });
    const message = answered.output.find((item) => item.type === 'message')!;
    await client().responses.create({ model: MODEL, input: [{ role: 'user', content: 'Hi' }, { type: 'item_reference', id: message.id }, { role: 'user', content: 'More' }] });
    expect(lastGeneration(vllm).body.messages).toEqual([
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: REPLY },
      { role: 'user', content: 'More' },
    ]);
    await expect(client().responses.create({ model: MODEL, input: 'More', previous_response_id: answered.id })).rejects.toMatchObject({ status: 400, code: 'input_not_kept', param: 'previous_response_id' });
    await expect(client().responses.inputItems.list(answered.id)).rejects.toMatchObject({ status: 404, code: 'input_not_kept' });
    // One byte under the bound is kept whole.
    const kept = await client().responses.create({ model: MODEL, input: 'x'.repeat(MAX_INPUT_BYTES - 200) });
    expect((await client().responses.inputItems.list(kept.id)).data).toHaveLength(1);
  });

  it('resolves item_reference to a kept call and input item; an unknown one is 400 naming input[i]', async () => {
    const tools = [{ type: 'function' as const, name: 'weather', parameters: { type: 'object', properties: { city: { type: 'string' } } }, strict: false }];
    const called = await client().responses.create({ model: MODEL, input: 'Use weather', tools });
    const call = called.output.find((item) => item.type === 'function_call')!;
    expect(call).toBeDefined();
    const [asked] = (await client().responses.inputItems.list(called.id)).data;
    await client().responses.create({
      model: MODEL,
      tools,
      input: [
        { type: 'item_reference', id: asked!.id! },
        { type: 'item_reference', id: call.id! },
        { type: 'function_call_output', call_id: call.call_id, output: 'clear' },
      ],
    });
    expect(lastGeneration(vllm).body.messages).toMatchObject([
      { role: 'user', content: 'Use weather' },
      { role: 'assistant', content: null, tool_calls: [{ id: call.call_id, function: { name: 'weather', arguments: call.arguments } }] },
      { role: 'tool', tool_call_id: call.call_id, content: 'clear' },
    ]);
    await expect(client().responses.create({ model: MODEL, input: [{ role: 'user', content: 'x' }, { type: 'item_reference', id: 'msg_0000' }] })).rejects.toMatchObject({
      status: 400,
      code: 'item_not_found',
      param: 'input[1]',
    });
  });

  it('keeps text as written, NUL included; an id no response could have is 404 or 400 as any unknown one', async () => {
    const created = await client().responses.create({ model: MODEL, input: 'a\u0000b', metadata: { note: 'c\u0000d' } });
    expect(await getJson(mount, keyOf(), `/responses/${created.id}`)).toMatchObject({ id: created.id, metadata: { note: 'c\u0000d' } });
    expect((await client().responses.inputItems.list(created.id)).data[0]).toMatchObject({ content: [{ type: 'input_text', text: 'a\u0000b' }] });
    for (const id of ['resp_\u0000', 'x'.repeat(300), "resp_'; drop"]) {
      await expect(client().responses.retrieve(id)).rejects.toMatchObject({ status: 404, code: 'response_not_found' });
      await expect(client().responses.delete(id)).rejects.toMatchObject({ status: 404, code: 'response_not_found' });
      await expect(client().responses.create({ model: MODEL, previous_response_id: id, input: 'x' })).rejects.toMatchObject({ status: 400, code: 'previous_response_not_found' });
    }
    await expect(client().responses.create({ model: MODEL, input: [{ type: 'item_reference', id: 'msg_\u0000' }] })).rejects.toMatchObject({ status: 400, code: 'item_not_found', param: 'input[0]' });
  });

  it('answers an expired response 404 before it is swept', async () => {
    const created = await client().responses.create({ model: MODEL, input: 'Say hello' });
    await db.query(`update "inference"."stored_response" set "expires_at" = now() - interval '1 second' where "id" = $1`, [created.id]);
    await expect(client().responses.retrieve(created.id)).rejects.toMatchObject({ status: 404, code: 'response_not_found' });
    await expect(client().responses.create({ model: MODEL, previous_response_id: created.id, input: 'x' })).rejects.toMatchObject({ status: 400, code: 'previous_response_not_found' });
  });
});

describe('scopes', () => {
  it("keeps a keyed response to its account: another account's key and the keyless mounts get 404", async () => {
    const created = await clientOf('/inference/text', textKey).responses.create({ model: MODEL, input: 'Say hello' });
    // One account's responses on either keyed mount.
    await expect(clientOf('/inference/image', textKey).responses.retrieve(created.id)).resolves.toMatchObject({ id: created.id });
    for (const [mount, key] of [
      ['/inference/text', otherKey],
      ['/inference/image', otherKey],
      ['/inference/proxy', 'unused'],
      ['/inference/gateway', 'unused'],
    ] as const) {
      const other = clientOf(mount, key);
      await expect(other.responses.retrieve(created.id)).rejects.toMatchObject({ status: 404, code: 'response_not_found' });
      await expect(other.responses.delete(created.id)).rejects.toMatchObject({ status: 404, code: 'response_not_found' });
      await expect(other.responses.inputItems.list(created.id)).rejects.toMatchObject({ status: 404, code: 'response_not_found' });
      await expect(other.responses.create({ model: MODEL, previous_response_id: created.id, input: 'x' })).rejects.toMatchObject({ status: 400, code: 'previous_response_not_found' });
      await expect(other.responses.create({ model: MODEL, input: [{ type: 'item_reference', id: created.output[0]!.id! }] })).rejects.toMatchObject({ status: 400, code: 'item_not_found' });
    }
    await expect(clientOf('/inference/text', textKey).responses.retrieve(created.id)).resolves.toMatchObject({ id: created.id });
  });

  it('keeps a keyless response to the keyless mounts: the proxy and the gateway share it, a key does not see it', async () => {
    const created = await clientOf('/inference/proxy', 'unused').responses.create({ model: MODEL, input: 'Say hello' });
    await expect(clientOf('/inference/gateway', 'unused').responses.retrieve(created.id)).resolves.toEqual(created);
    await expect(clientOf('/inference/text', textKey).responses.retrieve(created.id)).rejects.toMatchObject({ status: 404, code: 'response_not_found' });
  });
});
