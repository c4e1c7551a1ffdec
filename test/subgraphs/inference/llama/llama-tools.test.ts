import { Ajv } from 'ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FinishReason, GenerationEvent, GenerationRequest, ToolDefinition, ToolUse } from '../../../../subgraphs/inference/engine/text-engine.js';
import type { LlamaEngine } from '../../../../subgraphs/inference/engines/llama/llama-engine.js';
import { startRandomModelEngine, type RandomModelEngine } from './random-model-engine.js';
import { toolPreamble } from '../../../../subgraphs/inference/engines/llama/tool-preamble.js';
import { collect } from './collect.js';

let engine: LlamaEngine;
let fixture: RandomModelEngine | undefined;

const WEATHER: ToolDefinition = {
  name: 'get_weather',
  parameters: { type: 'object', properties: { city: { type: 'string', maxLength: 12 }, days: { type: 'integer', minimum: 1, maximum: 7 } }, required: ['city', 'days'], additionalProperties: false },
};
const TIME: ToolDefinition = { name: 'get_time', parameters: { type: 'object', properties: { zone: { enum: ['UTC', 'CET'] } }, required: ['zone'], additionalProperties: false } };
const SEEDS = [1, 2, 3, 4];

// A ChatML template that renders tools (as Qwen's and Hermes' do): a system turn listing them as JSON.
const TOOLS_TEMPLATE = `{%- if tools %}<|im_start|>system
{% if messages[0].role == 'system' %}{{ messages[0].content }}

{% endif %}# Tools
<tools>
{% for tool in tools %}{{ tool | tojson }}
{% endfor %}</tools><|im_end|>
{% elif messages[0].role == 'system' %}<|im_start|>system
{{ messages[0].content }}<|im_end|>
{% endif %}
{%- for message in messages %}
{%- if message.role == 'user' %}<|im_start|>user
{{ message.content }}<|im_end|>
{% elif message.role == 'assistant' %}<|im_start|>assistant
{% if message.content %}{{ message.content }}{% endif %}{% if message.tool_calls %}{% for tc in message.tool_calls %}<tool_call>
{"name": "{{ tc.function.name }}", "arguments": {{ tc.function.arguments | tojson }}}
</tool_call>{% endfor %}{% endif %}<|im_end|>
{% elif message.role == 'tool' %}<|im_start|>user
<tool_response>
{{ message.content }}
</tool_response><|im_end|>
{% endif %}{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant
{% endif %}`;

function request(tools: ToolUse, seed: number, messages: GenerationRequest['input'] = { kind: 'chat', messages: [{ role: 'user', content: 'What is the weather in Oslo?' }] }): GenerationRequest {
  return { model: 'good', input: messages, sampling: { maxTokens: 120, seed, temperature: 1 }, tools, signal: new AbortController().signal };
}

interface Calls {
  calls: { id?: string; name?: string; arguments: string }[];
  pieces: number;
  text: string;
  finishReason?: FinishReason;
}

async function calls(events: AsyncIterable<GenerationEvent>): Promise<Calls> {
  const out: Calls = { calls: [], pieces: 0, text: '' };
  for await (const event of events) {
    if (event.type === 'tool_call') {
      out.pieces++;
      const call = (out.calls[event.index] ??= { arguments: '' });
      if (event.id) call.id = event.id;
      if (event.name) call.name = event.name;
      call.arguments += event.arguments;
    } else if (event.type === 'delta') out.text += event.text;
    else out.finishReason = event.finishReason;
  }
  return out;
}

beforeAll(async () => {
  fixture = await startRandomModelEngine('llama-tools', { 'good.gguf': { seed: 11, contextLength: 2048 }, 'tooled.gguf': { seed: 12, contextLength: 2048, chatTemplate: TOOLS_TEMPLATE } }, 2048);
  ({ engine } = fixture);
}, 120_000);

afterAll(async () => {
  await fixture?.close();
});

describe('tool calling on the llama engine', () => {
  it('lists its models as calling tools', async () => {
    expect((await engine.models())[0]?.tools).toBe(true);
  });

  it("with 'required' answers one call of a listed tool whose streamed arguments validate against its schema, whatever the seed", async () => {
    const ajv = new Ajv();
    const validators = { get_weather: ajv.compile(WEATHER.parameters!), get_time: ajv.compile(TIME.parameters!) };
    for (const seed of SEEDS) {
      const answer = await calls(engine.generate(request({ definitions: [WEATHER, TIME], choice: 'required', parallel: false }, seed)));
      const context = `seed ${seed}: ${JSON.stringify(answer)}`;
      expect(answer.finishReason, context).toBe('tool_calls');
      expect(answer.text, context).toBe('');
      expect(answer.calls, context).toHaveLength(1);
      const [call] = answer.calls;
      expect(call.id, context).toMatch(/^call_/);
      expect(['get_weather', 'get_time'], context).toContain(call.name);
      expect(validators[call.name as 'get_weather'](JSON.parse(call.arguments)), context).toBe(true);
      expect(answer.pieces, context).toBeGreaterThan(2);
    }
  }, 240_000);

  it('with a named tool calls that tool', async () => {
    for (const seed of SEEDS) {
      const answer = await calls(engine.generate(request({ definitions: [WEATHER, TIME], choice: { name: 'get_time' }, parallel: false }, seed)));
      expect(answer.finishReason).toBe('tool_calls');
      expect(answer.calls[0]?.name).toBe('get_time');
      expect(['UTC', 'CET']).toContain((JSON.parse(answer.calls[0]!.arguments) as { zone: string }).zone);
    }
  }, 240_000);

  it("with 'none' answers text", async () => {
    const answer = await calls(engine.generate(request({ definitions: [WEATHER], choice: 'none', parallel: true }, 1)));
    expect(answer.calls).toHaveLength(0);
    expect(answer.finishReason).not.toBe('tool_calls');
  }, 120_000);

  it("with 'auto' answers either text that does not begin as a call, or valid calls with finish_reason tool_calls", async () => {
    const ajv = new Ajv();
    const validators = { get_weather: ajv.compile(WEATHER.parameters!), get_time: ajv.compile(TIME.parameters!) };
    const shapes = new Set<string>();
    // The first token decides; a one-token answer finds the seeds whose answer is a call, rarer on this random model.
    const callSeeds: number[] = [];
    for (let seed = 1; seed <= 1000 && callSeeds.length === 0; seed++) {
      const first = await calls(engine.generate({ ...request({ definitions: [WEATHER, TIME], choice: 'auto', parallel: true }, seed), sampling: { maxTokens: 1, seed, temperature: 1 } }));
      if (first.text === '') callSeeds.push(seed);
      else expect(first.text.trimStart()[0], `seed ${seed}`).not.toBe('{');
    }
    expect(callSeeds.length, 'a seed that starts a call').toBeGreaterThan(0);
    for (const seed of [...SEEDS, ...callSeeds]) {
      const answer = await calls(engine.generate({ ...request({ definitions: [WEATHER, TIME], choice: 'auto', parallel: true }, seed), sampling: { maxTokens: 400, seed, temperature: 1 } }));
      const context = `seed ${seed}: ${JSON.stringify(answer)}`;
      if (answer.calls.length === 0) {
        shapes.add('text');
        expect(answer.text.length, context).toBeGreaterThan(0);
        expect(answer.text[0], context).not.toMatch(/[{\s]/u);
        expect(['stop', 'length'], context).toContain(answer.finishReason);
      } else {
        shapes.add('calls');
        expect(answer.text, context).toBe('');
        expect(answer.finishReason, context).toBe('tool_calls');
        for (const call of answer.calls) {
          expect(call.id, context).toMatch(/^call_/);
          expect(validators[call.name as 'get_weather'](JSON.parse(call.arguments)), context).toBe(true);
        }
      }
    }
    expect([...shapes].sort()).toEqual(['calls', 'text']);
  }, 480_000);

  it('with parallel_tool_calls answers up to four calls, each with its own index and id', async () => {
    const ajv = new Ajv();
    const validators = { get_weather: ajv.compile(WEATHER.parameters!), get_time: ajv.compile(TIME.parameters!) };
    let most = 0;
    for (const seed of SEEDS) {
      const answer = await calls(engine.generate({ ...request({ definitions: [WEATHER, TIME], choice: 'required', parallel: true }, seed), sampling: { maxTokens: 400, seed, temperature: 1 } }));
      const context = `seed ${seed}: ${JSON.stringify(answer)}`;
      expect(answer.finishReason, context).toBe('tool_calls');
      expect(answer.calls.length, context).toBeGreaterThanOrEqual(1);
      expect(answer.calls.length, context).toBeLessThanOrEqual(4);
      expect(new Set(answer.calls.map((call) => call.id)).size, context).toBe(answer.calls.length);
      for (const call of answer.calls) expect(validators[call.name as 'get_weather'](JSON.parse(call.arguments)), context).toBe(true);
      most = Math.max(most, answer.calls.length);
    }
    expect(most, 'some seed makes more than one call').toBeGreaterThan(1);
  }, 480_000);

  it('shows the tools to a model whose template has no tools support as a system preamble with each name and parameters schema', async () => {
    const asked: GenerationRequest['input'] = { kind: 'chat', messages: [{ role: 'user', content: 'What is the weather in Oslo?' }] };
    const preamble = toolPreamble([WEATHER, TIME]);
    for (const tool of [WEATHER, TIME]) {
      expect(preamble).toContain(tool.name);
      expect(preamble).toContain(JSON.stringify(tool.parameters));
    }
    const plain = await engine.tokenize('good', asked);
    const shown = await engine.tokenize('good', asked, [WEATHER, TIME]);
    const expected = await engine.tokenize('good', { kind: 'chat', messages: [{ role: 'system', content: preamble }, ...asked.messages] });
    expect(shown.tokens).toEqual(expected.tokens);
    // A system turn of the request's own keeps its text after the preamble.
    const withSystem = await engine.tokenize('good', { kind: 'chat', messages: [{ role: 'system', content: 'Be brief.' }, ...asked.messages] }, [WEATHER]);
    const merged = await engine.tokenize('good', { kind: 'chat', messages: [{ role: 'system', content: `${toolPreamble([WEATHER])}\n\nBe brief.` }, ...asked.messages] });
    expect(withSystem.tokens).toEqual(merged.tokens);
    // A generation offering the tools evaluates that prompt; 'none' shows none.
    const offered = await collect(engine.generate({ ...request({ definitions: [WEATHER, TIME], choice: 'auto', parallel: true }, 1, asked), sampling: { maxTokens: 1, seed: 1 } }));
    expect(offered.usage.promptTokens).toBe(shown.count);
    const none = await collect(engine.generate({ ...request({ definitions: [WEATHER, TIME], choice: 'none', parallel: true }, 1, asked), sampling: { maxTokens: 1, seed: 1 } }));
    expect(none.usage.promptTokens).toBe(plain.count);
  }, 120_000);

  it("shows the tools through the model's chat template when the template renders tools", async () => {
    const zone: ToolDefinition = { name: 'get_zone', description: 'The time zone of a city', parameters: { type: 'object', properties: { city: { type: 'string', maxLength: 12 } } } };
    const asked: GenerationRequest['input'] = { kind: 'chat', messages: [{ role: 'user', content: 'Zone of Oslo?' }] };
    const shown = await engine.tokenize('tooled', asked, [zone]);
    // The template's tools turn is a system turn of this text (its tojson writes ", " and ": ").
    const listed = '{"type": "function", "function": {"name": "get_zone", "description": "The time zone of a city", "parameters": {"type": "object", "properties": {"city": {"type": "string", "maxLength": 12}}}}}';
    const expected = await engine.tokenize('tooled', { kind: 'chat', messages: [{ role: 'system', content: `# Tools\n<tools>\n${listed}\n</tools>` }, ...asked.messages] });
    expect(shown.tokens).toEqual(expected.tokens);
    const answer = await calls(engine.generate({ model: 'tooled', input: asked, sampling: { maxTokens: 200, seed: 1, temperature: 1 }, tools: { definitions: [zone], choice: 'required', parallel: false }, signal: new AbortController().signal }));
    expect(answer.finishReason).toBe('tool_calls');
    expect(answer.calls).toHaveLength(1);
    expect(typeof (JSON.parse(answer.calls[0]!.arguments) as { city?: unknown })).toBe('object');
  }, 120_000);

  it('refuses guided output with tools unless tool_choice is none, rather than ignore the guided form', async () => {
    const guided = { kind: 'json' as const, schema: { type: 'object', properties: { a: { type: 'string' } } } };
    const refused = await calls(engine.generate({ ...request({ definitions: [WEATHER], choice: 'auto', parallel: true }, 1), guided })).catch((error: unknown) => error);
    expect(refused).toMatchObject({ name: 'EngineError', reason: 'unsupported_parameter', param: 'tool_choice' });
    const text = await calls(engine.generate({ ...request({ definitions: [WEATHER], choice: 'none', parallel: true }, 1), guided, sampling: { maxTokens: 60, seed: 1 } }));
    expect(text.calls).toHaveLength(0);
  }, 120_000);

  it('accepts a history with an assistant call and its tool result', async () => {
    const history: GenerationRequest['input'] = {
      kind: 'chat',
      messages: [
        { role: 'user', content: 'What is the weather in Oslo?' },
        { role: 'assistant', content: null, toolCalls: [{ id: 'call_1', name: 'get_weather', arguments: '{"city":"Oslo","days":1}' }] },
        { role: 'tool', toolCallId: 'call_1', content: '{"temperature":4}' },
      ],
    };
    const answer = await collect(engine.generate(request({ definitions: [WEATHER], choice: 'none', parallel: true }, 2, history)));
    expect(['stop', 'length']).toContain(answer.finishReason);
    expect(answer.usage.promptTokens).toBeGreaterThan(20);
  }, 120_000);

  it('a call cut by max_tokens ends with length', async () => {
    const cut = { ...request({ definitions: [WEATHER], choice: 'required', parallel: false }, 3), sampling: { maxTokens: 12, seed: 3, temperature: 1 } };
    const answer = await calls(engine.generate(cut));
    expect(answer.finishReason).toBe('length');
  }, 120_000);
});
