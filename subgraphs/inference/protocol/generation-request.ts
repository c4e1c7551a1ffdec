import { z } from 'zod';
import type { ChatMessage, GenerationInput, Guided, SamplingParams, ToolUse } from '../engine/text-engine.js';
import type { WireInterface } from './wire-interface.js';
import { IMAGE_URL_SCHEMES_MESSAGE, isHttpOrDataUrl } from '../image-input/image-input.js';

/**
 * The OpenAI-compatible request bodies of the four interfaces, validated with zod. Which
 * parameters a body may carry depends on the interface, as the specification lists them:
 * Service T the OpenAI set plus top_k, min_p, repetition_penalty and seed; Service I and its
 * proxy also top_a, tfs, typical_p, no_repeat_ngram_size, the DRY parameters, mirostat and the
 * guided_* parameters; the gateway, which fronts every provider, all of them plus `provider`.
 * A parameter a body may not carry is refused, never ignored: it would change the answer.
 */

const probability = z.number().min(0).max(1);
const penalty = z.number().min(0).max(2);
const int = z.int();

// `developer` is the newer OpenAI name for the system role; templates know only `system`.
const role = z.enum(['system', 'user', 'assistant', 'developer']);

const contentPart = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('text'), text: z.string() }),
  z.strictObject({
    type: z.literal('image_url'),
    // The spec's two forms only: a file:, ftp: or gopher: URL never reaches an engine.
    image_url: z.strictObject({ url: z.string().min(1).refine(isHttpOrDataUrl, IMAGE_URL_SCHEMES_MESSAGE), detail: z.enum(['auto', 'low', 'high']).optional() }),
  }),
]);

const textPart = z.strictObject({ type: z.literal('text'), text: z.string() });
const name = z.string().max(64).optional();
const toolCall = z.strictObject({
  id: z.string().min(1).max(256),
  type: z.literal('function'),
  function: z.strictObject({ name: z.string().min(1).max(64), arguments: z.string() }),
});

// One schema per role, as OpenAI's: only an assistant turn carries tool_calls (and then its content
// may be null), only a tool turn answers one by tool_call_id.
const message = z.discriminatedUnion('role', [
  z.strictObject({ role: z.enum(['system', 'user', 'developer']), content: z.union([z.string(), z.array(contentPart).min(1)]), name }),
  z
    .strictObject({
      role: z.literal('assistant'),
      content: z.union([z.string(), z.array(textPart).min(1)]).nullable().optional(),
      tool_calls: z.array(toolCall).min(1).max(128).optional(),
      refusal: z.string().nullable().optional(),
      name,
    })
    .refine((m) => m.content != null || m.tool_calls !== undefined, { message: 'An assistant message needs content or tool_calls', path: ['content'] }),
  z.strictObject({ role: z.literal('tool'), content: z.union([z.string(), z.array(textPart).min(1)]), tool_call_id: z.string().min(1).max(256) }),
]);

const functionName = z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/, 'must be 1-64 letters, digits, underscores or dashes');
const tool = z.strictObject({
  type: z.literal('function'),
  function: z.strictObject({
    name: functionName,
    description: z.string().optional(),
    parameters: z.record(z.string(), z.unknown()).optional(),
    strict: z.boolean().nullable().optional(),
  }),
});
const toolChoice = z.union([
  z.enum(['none', 'auto', 'required']),
  z.strictObject({ type: z.literal('function'), function: z.strictObject({ name: functionName }) }),
]);

/**
 * OpenAI's null semantics: an optional field given as null is absent (`temperature: null`,
 * `tools: null`), as OpenAI and vLLM read it; a required one given as null is then missing. A
 * message's content keeps its null (an assistant turn that is tool calls alone).
 */
function withoutNulls(body: unknown): unknown {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return body;
  const entries = Object.entries(body).filter(([, value]) => value !== null);
  const messages = (body as { messages?: unknown }).messages;
  const out = Object.fromEntries(entries);
  if (Array.isArray(messages)) {
    out.messages = messages.map((m) =>
      typeof m === 'object' && m !== null && !Array.isArray(m) ? Object.fromEntries(Object.entries(m).filter(([key, value]) => value !== null || key === 'content')) : m,
    );
  }
  return out;
}

const stop = z.union([z.string().min(1), z.array(z.string().min(1)).min(1).max(4)]);

/** The most choices (`n`) one request may ask for. */
export const MAX_CHOICES = 16;

/** The parameters every interface accepts (OpenAI's own and the spec's Service T table). */
const common = {
  model: z.string().min(1).max(256),
  temperature: z.number().min(0).max(2).optional(),
  top_p: probability.optional(),
  max_tokens: int.min(1).optional(),
  // The newer OpenAI name of max_tokens, sent by current SDKs for chat.
  max_completion_tokens: int.min(1).optional(),
  stop: stop.nullable().optional(),
  seed: int.min(0).max(0xffffffff).optional(),
  presence_penalty: penalty.optional(),
  frequency_penalty: penalty.optional(),
  stream: z.boolean().optional(),
  stream_options: z.strictObject({ include_usage: z.boolean().optional() }).nullable().optional(),
  // Choices: vLLM sets no cap; each one here costs a whole generation, so at most MAX_CHOICES.
  n: int.min(1).max(MAX_CHOICES).optional(),
  user: z.string().max(256).optional(),
};

/** Service T's extra sampling parameters (its table), also on every other interface. */
const serviceT = {
  top_k: int.min(-1).optional(),
  min_p: probability.optional(),
  repetition_penalty: z.number().gt(0).max(2).optional(),
};

/**
 * vLLM's own parameters, checked for shape only and carried verbatim (GenerationRequest.passthrough)
 * to an engine that takes them; every other engine refuses them by name.
 */
const vllmOwn = {
  structured_outputs: z.record(z.string(), z.unknown()).optional(),
  min_tokens: int.min(0).optional(),
  ignore_eos: z.boolean().optional(),
  chat_template_kwargs: z.record(z.string(), z.unknown()).optional(),
  guided_grammar: z.string().min(1).max(65_536).optional(),
};

/** The names of vLLM's own parameters, in the order a refusal names them. */
export const PASSTHROUGH_PARAMS = Object.keys(vllmOwn) as (keyof typeof vllmOwn)[];

/** Service I's extra parameters (its table). */
const serviceI = {
  top_a: probability.optional(),
  tfs: probability.optional(),
  typical_p: z.number().gt(0).max(1).optional(),
  no_repeat_ngram_size: int.min(0).max(64).optional(),
  dry_multiplier: z.number().min(0).max(100).optional(),
  dry_base: z.number().min(1).max(100).optional(),
  dry_allowed_length: int.min(1).max(1000).optional(),
  mirostat: z.union([z.literal(0), z.literal(1), z.literal(2)]).optional(),
  guided_json: z.record(z.string(), z.unknown()).optional(),
  guided_regex: z.string().min(1).max(4096).optional(),
  guided_choice: z.array(z.string().min(1).max(1024)).min(1).max(256).optional(),
  ...vllmOwn,
};

/** OpenAI's structured output, read as guided_json (json_schema) or as any JSON object (json_object). */
const responseFormat = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('text') }),
  z.strictObject({ type: z.literal('json_object') }),
  z.strictObject({
    type: z.literal('json_schema'),
    json_schema: z.strictObject({
      name: z.string().min(1).max(64),
      description: z.string().optional(),
      schema: z.record(z.string(), z.unknown()).optional(),
      strict: z.boolean().nullable().optional(),
    }),
  }),
]);

function extrasOf(iface: WireInterface) {
  const gatewayOnly = iface === 'gateway' ? { provider: z.string().min(1).max(64).optional() } : {};
  const guided = iface === 'serviceT' ? {} : serviceI;
  return { ...common, ...serviceT, ...guided, ...gatewayOnly, response_format: responseFormat.optional() };
}

const chatSchemas = new Map<WireInterface, z.ZodType>();
const completionSchemas = new Map<WireInterface, z.ZodType>();

export function chatSchema(iface: WireInterface) {
  let schema = chatSchemas.get(iface);
  if (!schema) {
    const chat = z.strictObject({
      ...extrasOf(iface),
      messages: z.array(message).min(1).max(1024),
      tools: z.array(tool).min(1).max(128).optional(),
      tool_choice: toolChoice.optional(),
      parallel_tool_calls: z.boolean().optional(),
      logprobs: z.boolean().optional(),
      top_logprobs: int.min(0).max(20).optional(),
    });
    chatSchemas.set(iface, (schema = z.preprocess(withoutNulls, chat)));
  }
  return schema as z.ZodType<ChatBody>;
}

export function completionSchema(iface: WireInterface) {
  let schema = completionSchemas.get(iface);
  if (!schema) {
    // OpenAI also takes a prompt as an array; one prompt per request here (one sequence).
    const prompt = z.union([z.string(), z.array(z.string()).length(1)]);
    const { response_format: _unused, ...extras } = extrasOf(iface);
    completionSchemas.set(iface, (schema = z.preprocess(withoutNulls, z.strictObject({ ...extras, prompt, logprobs: int.min(0).max(5).optional() }))));
  }
  return schema as z.ZodType<CompletionBody>;
}

const tokenizeBody = z.strictObject({
  model: z.string().min(1).max(256),
  messages: z.array(message).min(1).max(1024).optional(),
  prompt: z.string().optional(),
  provider: z.string().min(1).max(64).optional(),
  // As vLLM's: the chat template renders them, so the count is the prompt a chat call with them sees.
  tools: z.array(tool).min(1).max(128).optional(),
  // vLLM's tokenize options that do not change the count's meaning are not taken: refuse rather than ignore.
});
export const tokenizeSchema = z.preprocess(withoutNulls, tokenizeBody) as unknown as typeof tokenizeBody;

type Message = z.infer<typeof message>;

export interface GenerationBody {
  model: string;
  provider?: string;
  temperature?: number;
  top_p?: number;
  max_tokens?: number;
  max_completion_tokens?: number;
  stop?: string | string[] | null;
  seed?: number;
  presence_penalty?: number;
  frequency_penalty?: number;
  stream?: boolean;
  stream_options?: { include_usage?: boolean } | null;
  n?: number;
  top_k?: number;
  min_p?: number;
  repetition_penalty?: number;
  top_a?: number;
  tfs?: number;
  typical_p?: number;
  no_repeat_ngram_size?: number;
  dry_multiplier?: number;
  dry_base?: number;
  dry_allowed_length?: number;
  mirostat?: 0 | 1 | 2;
  guided_json?: Record<string, unknown>;
  guided_regex?: string;
  guided_choice?: string[];
  response_format?: z.infer<typeof responseFormat>;
  structured_outputs?: Record<string, unknown>;
  min_tokens?: number;
  ignore_eos?: boolean;
  chat_template_kwargs?: Record<string, unknown>;
  guided_grammar?: string;
}

export interface ChatBody extends GenerationBody {
  messages: Message[];
  tools?: z.infer<typeof tool>[];
  tool_choice?: z.infer<typeof toolChoice>;
  parallel_tool_calls?: boolean;
  logprobs?: boolean;
  top_logprobs?: number;
}

export interface CompletionBody extends GenerationBody {
  prompt: string | [string];
  /** Completions' form: the number of alternatives per token (0-5). */
  logprobs?: number;
}

/**
 * The log probabilities a body asks for: chat's logprobs true with top_logprobs alternatives
 * (which need logprobs true), or completions' logprobs count.
 */
export function logprobsOf(body: ChatBody | CompletionBody): { top: number } | BodyConflict | undefined {
  if (!('messages' in body)) return typeof body.logprobs === 'number' ? { top: body.logprobs } : undefined;
  if (body.top_logprobs !== undefined && body.logprobs !== true) return ['top_logprobs', 'top_logprobs is only allowed when logprobs is true'];
  return body.logprobs === true ? { top: body.top_logprobs ?? 0 } : undefined;
}

export type TokenizeBody = z.infer<typeof tokenizeSchema>;

/** The engine-neutral sampling parameters of a body (absent ones stay absent: the engine's default). */
export function samplingOf(body: GenerationBody): SamplingParams {
  const stopList = body.stop == null ? undefined : typeof body.stop === 'string' ? [body.stop] : body.stop;
  const entries: [keyof SamplingParams, unknown][] = [
    ['temperature', body.temperature],
    ['topP', body.top_p],
    ['topK', body.top_k === -1 ? undefined : body.top_k],
    ['minP', body.min_p],
    ['maxTokens', body.max_tokens ?? body.max_completion_tokens],
    ['stop', stopList],
    ['seed', body.seed],
    ['presencePenalty', body.presence_penalty],
    ['frequencyPenalty', body.frequency_penalty],
    ['repetitionPenalty', body.repetition_penalty],
    ['topA', body.top_a],
    ['tfs', body.tfs],
    ['typicalP', body.typical_p],
    ['noRepeatNgramSize', body.no_repeat_ngram_size],
    ['dryMultiplier', body.dry_multiplier],
    ['dryBase', body.dry_base],
    ['dryAllowedLength', body.dry_allowed_length],
    // mirostat 0 is "off": the same as not asking for it, which every engine honours.
    ['mirostat', body.mirostat === 0 ? undefined : body.mirostat],
  ];
  return Object.fromEntries(entries.filter(([, value]) => value !== undefined)) as SamplingParams;
}

/** vLLM's own parameters a body carries, verbatim, or undefined when none. */
export function passthroughOf(body: GenerationBody): Record<string, unknown> | undefined {
  const given = PASSTHROUGH_PARAMS.filter((name) => body[name] !== undefined).map((name) => [name, body[name]] as const);
  return given.length > 0 ? Object.fromEntries(given) : undefined;
}

/** A conflict between two parameters that each passed alone, as [param, message]. */
export type BodyConflict = [string, string];

/** The guided output a body asks for: at most one of guided_json, guided_regex, guided_choice, response_format. */
export function guidedOf(body: GenerationBody): Guided | BodyConflict | undefined {
  const asked: [string, Guided][] = [];
  if (body.guided_json !== undefined) asked.push(['guided_json', { kind: 'json', schema: body.guided_json }]);
  if (body.guided_regex !== undefined) asked.push(['guided_regex', { kind: 'regex', pattern: body.guided_regex }]);
  if (body.guided_choice !== undefined) asked.push(['guided_choice', { kind: 'choice', choices: body.guided_choice }]);
  const format = body.response_format;
  if (format?.type === 'json_object') asked.push(['response_format', { kind: 'json', schema: { type: 'object' } }]);
  if (format?.type === 'json_schema') asked.push(['response_format', { kind: 'json', schema: format.json_schema.schema ?? { type: 'object' } }]);
  // The upstream engine sends guided output to vLLM as structured_outputs; two of them cannot both hold.
  if (asked.length > 0 && body.structured_outputs !== undefined) return ['structured_outputs', `structured_outputs and ${asked[0]![0]} cannot both be given; give one`];
  if (asked.length > 1) return [asked[1]![0], `Only one of guided_json, guided_regex, guided_choice and response_format may be given; got ${asked.map(([name]) => name).join(' and ')}`];
  if (body.max_tokens !== undefined && body.max_completion_tokens !== undefined && body.max_tokens !== body.max_completion_tokens) {
    return ['max_completion_tokens', 'max_tokens and max_completion_tokens disagree; give one'];
  }
  if (body.stream_options && !body.stream) return ['stream_options', 'stream_options is only allowed when stream is true'];
  return asked[0]?.[1];
}

/** The engine's chat messages (developer is system; names are dropped by the templates anyway). */
export function messagesOf(messages: Message[]): ChatMessage[] {
  return messages.map((m): ChatMessage => {
    if (m.role === 'assistant') {
      const calls = m.tool_calls?.map((call) => ({ id: call.id, name: call.function.name, arguments: call.function.arguments }));
      return { role: 'assistant', content: (m.content ?? null) as ChatMessage['content'], ...(calls ? { toolCalls: calls } : {}) };
    }
    if (m.role === 'tool') return { role: 'tool', content: m.content as ChatMessage['content'], toolCallId: m.tool_call_id };
    return { role: m.role === 'developer' ? 'system' : m.role, content: m.content as ChatMessage['content'] };
  });
}

/**
 * The functions a chat body offers the model, or a conflict: tool_choice without tools, or naming
 * a function that is not among them. `none` offers none (the answer is text).
 */
export function toolUseOf(body: ChatBody): ToolUse | BodyConflict | undefined {
  const tools = body.tools ?? [];
  const choice = body.tool_choice;
  if (tools.length === 0) return choice === undefined || choice === 'none' ? undefined : ['tool_choice', 'tool_choice is only allowed when tools are given'];
  const names = tools.map((t) => t.function.name);
  const twice = names.find((n, i) => names.indexOf(n) !== i);
  if (twice) return ['tools', `Two tools are named ${twice}; function names must be unique`];
  if (typeof choice === 'object' && !names.includes(choice.function.name)) return ['tool_choice.function.name', `tool_choice names ${choice.function.name}, which is not among the tools`];
  if (choice === 'none') return undefined;
  return {
    definitions: tools.map((t) => ({
      name: t.function.name,
      ...(t.function.description !== undefined ? { description: t.function.description } : {}),
      ...(t.function.parameters !== undefined ? { parameters: t.function.parameters } : {}),
      ...(t.function.strict != null ? { strict: t.function.strict } : {}),
    })),
    choice: typeof choice === 'object' ? { name: choice.function.name } : (choice ?? 'auto'),
    parallel: body.parallel_tool_calls ?? true,
  };
}

/** The input of a chat or completion body. */
export function inputOf(body: ChatBody | CompletionBody): GenerationInput {
  if ('messages' in body) return { kind: 'chat', messages: messagesOf(body.messages) };
  return { kind: 'completion', prompt: typeof body.prompt === 'string' ? body.prompt : body.prompt[0] };
}

/** Every image URL of a chat's messages, for the interface's image-input rules. */
export function imageUrlsOf(messages: readonly ChatMessage[]): string[] {
  return messages.flatMap((m) => (!Array.isArray(m.content) ? [] : m.content.flatMap((part) => (part.type === 'image_url' ? [part.image_url.url] : []))));
}
