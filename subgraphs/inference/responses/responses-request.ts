import { z } from 'zod';
import type { ChatMessage, ContentPart, GenerationInput, Guided, SamplingParams, ToolUse } from '../engine/text-engine.js';
import { IMAGE_URL_SCHEMES_MESSAGE, isHttpOrDataUrl } from '../image-input/image-input.js';
import { WireError } from '../protocol/wire-error.js';

/**
 * The Responses API's request body (POST /v1/responses), as OpenAI documents it, validated with
 * zod and read into the engine-neutral generation input. `null` for an optional field means
 * absent, as OpenAI takes it. What the platform cannot honour (background runs, reasoning
 * settings, files) is refused by name, never ignored. Kept conversations (`previous_response_id`,
 * `item_reference`) are read from the store by the route before the body becomes a generation.
 */

const nullish = <T extends z.ZodType>(schema: T) => schema.nullable().optional();

const inputText = z.strictObject({ type: z.literal('input_text'), text: z.string() });
const inputImage = z.strictObject({
  type: z.literal('input_image'),
  // The spec's two forms only: a file:, ftp: or gopher: URL never reaches an engine.
  image_url: nullish(z.string().min(1).refine(isHttpOrDataUrl, IMAGE_URL_SCHEMES_MESSAGE)),
  file_id: nullish(z.string()),
  detail: nullish(z.enum(['auto', 'low', 'high'])),
});
// An earlier answer sent back as input (a multi-turn conversation kept by the client).
const outputText = z.strictObject({ type: z.literal('output_text'), text: z.string(), annotations: z.array(z.unknown()).optional(), logprobs: nullish(z.array(z.unknown())) });
const refusal = z.strictObject({ type: z.literal('refusal'), refusal: z.string() });
const contentPart = z.discriminatedUnion('type', [inputText, inputImage, outputText, refusal]);

const message = z.strictObject({
  type: z.literal('message').optional(),
  id: z.string().optional(),
  status: z.string().optional(),
  role: z.enum(['user', 'assistant', 'system', 'developer']),
  content: z.union([z.string(), z.array(contentPart).min(1)]),
});
const functionCall = z.strictObject({
  type: z.literal('function_call'),
  id: z.string().optional(),
  status: z.string().optional(),
  call_id: z.string().min(1),
  name: z.string().min(1),
  arguments: z.string(),
});
const functionCallOutput = z.strictObject({
  type: z.literal('function_call_output'),
  id: z.string().optional(),
  status: z.string().optional(),
  call_id: z.string().min(1),
  output: z.union([z.string(), z.array(z.unknown())]),
});
// An item of a kept response (an input item or an output message or call), named by its id.
const itemReference = z.strictObject({ type: z.literal('item_reference'), id: z.string().min(1).max(64) });
const ITEM_TYPES = ['message', 'function_call', 'function_call_output', 'item_reference'];
const inputItem = z.union([message, functionCall, functionCallOutput, itemReference], {
  error: (issue) => {
    const type = (issue.input as { type?: unknown } | undefined)?.type;
    // Reasoning and the built-in tools' items refer to what is not served here.
    return issue.code === 'invalid_union' && typeof type === 'string' && !ITEM_TYPES.includes(type)
      ? `input items of type "${type}" are not served here (only ${ITEM_TYPES.join(', ')})`
      : undefined;
  },
});

const functionTool = z.strictObject({
  type: z.literal('function'),
  name: z.string().min(1).max(64),
  description: nullish(z.string()),
  parameters: nullish(z.record(z.string(), z.unknown())),
  strict: nullish(z.boolean()),
});
// The built-in tools (web_search, file_search, computer_use, mcp, ...) run on OpenAI's side: read here only to be refused by type.
const builtInTool = z.looseObject({ type: z.string().refine((type) => type !== 'function') });
const tool = z.union([functionTool, builtInTool]);

const textFormat = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('text') }),
  z.strictObject({ type: z.literal('json_object') }),
  z.strictObject({
    type: z.literal('json_schema'),
    name: z.string().min(1).max(64),
    schema: z.record(z.string(), z.unknown()),
    description: nullish(z.string()),
    strict: nullish(z.boolean()),
  }),
]);

const toolChoice = z.union([z.enum(['none', 'auto', 'required']), z.strictObject({ type: z.literal('function'), name: z.string().min(1) })]);

const schemas = new Map<boolean, z.ZodType>();

/** The body's schema; the gateway also takes `provider`, as its chat completions do. */
export function responsesSchema(gateway: boolean): z.ZodType<ResponsesBody> {
  let schema = schemas.get(gateway);
  if (!schema) {
    schema = z.strictObject({
      model: z.string().min(1).max(256),
      // A string is one user message, so that a bad item's refusal names it (a union would name only `input`).
      input: z.preprocess((value) => (typeof value === 'string' ? [{ role: 'user', content: value }] : value), z.array(inputItem).min(1).max(1024)),
      instructions: nullish(z.string()),
      max_output_tokens: nullish(z.int().min(1)),
      temperature: nullish(z.number().min(0).max(2)),
      top_p: nullish(z.number().min(0).max(1)),
      text: nullish(z.strictObject({ format: nullish(textFormat), verbosity: nullish(z.enum(['medium'])) })),
      tools: nullish(z.array(tool).max(128)),
      tool_choice: nullish(toolChoice),
      parallel_tool_calls: nullish(z.boolean()),
      stream: nullish(z.boolean()),
      stream_options: nullish(z.strictObject({ include_obfuscation: nullish(z.boolean()) })),
      store: nullish(z.boolean()),
      previous_response_id: nullish(z.string()),
      metadata: nullish(z.record(z.string().max(64), z.string().max(512))),
      user: nullish(z.string().max(256)),
      truncation: nullish(z.enum(['disabled'])),
      ...(gateway ? { provider: z.string().min(1).max(64).optional() } : {}),
    });
    schemas.set(gateway, schema);
  }
  return schema as z.ZodType<ResponsesBody>;
}

type InputItem = z.infer<typeof inputItem>;
/** An input item once references are resolved: what a conversation is made of. */
export type ConversationItem = Exclude<InputItem, { type: 'item_reference' }>;
type Tool = z.infer<typeof tool>;
type FunctionTool = z.infer<typeof functionTool>;

export interface ResponsesBody {
  model: string;
  provider?: string;
  input: InputItem[];
  instructions?: string | null;
  max_output_tokens?: number | null;
  temperature?: number | null;
  top_p?: number | null;
  text?: { format?: z.infer<typeof textFormat> | null; verbosity?: 'medium' | null } | null;
  tools?: Tool[] | null;
  tool_choice?: z.infer<typeof toolChoice> | null;
  parallel_tool_calls?: boolean | null;
  stream?: boolean | null;
  stream_options?: { include_obfuscation?: boolean | null } | null;
  store?: boolean | null;
  previous_response_id?: string | null;
  metadata?: Record<string, string> | null;
  user?: string | null;
  truncation?: 'disabled' | null;
}

/** What a Responses body asks of the generation, in the engines' terms. */
export interface ResponsesCall {
  input: GenerationInput;
  sampling: SamplingParams;
  guided?: Guided;
  /** The functions the model may call; absent with none or tool_choice "none". */
  tools?: ToolUse;
  /** A parameter named in chat's terms (`messages[1].content[0].image_url.url`) as the body has it (`input[0].content[0].image_url`). */
  paramOf(param: string | null): string | null;
}

/**
 * Reads a validated body into a generation, or refuses what it cannot serve. `tool_choice: none`
 * with tools asks for text only, which every model gives, so the tools are not sent on.
 */
export function responsesCallOf(body: ResponsesBody, badValue: 400 | 422, conversation: { history: ConversationItem[]; input: ConversationItem[] }): ResponsesCall {
  if (body.stream_options != null && body.stream !== true) throw new WireError(400, 'invalid_value', 'stream_options is only allowed when stream is true', 'stream_options');
  const tools = (body.tools ?? []).map((t, i): FunctionTool => {
    if (t.type === 'function') return t as FunctionTool;
    throw new WireError(400, 'unsupported_parameter', `tools of type "${t.type}" are not served here: only function tools, which the client runs`, `tools[${i}].type`);
  });
  const choice = body.tool_choice ?? 'auto';
  if (typeof choice === 'object' && !tools.some((t) => t.name === choice.name)) {
    throw new WireError(badValue, 'invalid_value', `tool_choice names a function that is not among the tools`, 'tool_choice.name');
  }
  if (choice === 'required' && tools.length === 0) throw new WireError(badValue, 'invalid_value', 'tool_choice "required" needs at least one tool', 'tool_choice');
  const names = new Set<string>();
  tools.forEach((t, i) => {
    if (names.has(t.name)) throw new WireError(badValue, 'invalid_value', `Two tools are named '${t.name}'`, `tools[${i}].name`);
    names.add(t.name);
  });
  const toolUse: ToolUse | undefined =
    tools.length > 0 && choice !== 'none'
      ? {
          definitions: tools.map((t) => ({
            name: t.name,
            ...(t.description != null ? { description: t.description } : {}),
            ...(t.parameters != null ? { parameters: t.parameters } : {}),
            ...(t.strict != null ? { strict: t.strict } : {}),
          })),
          choice: typeof choice === 'object' ? { name: choice.name } : choice,
          parallel: body.parallel_tool_calls ?? true,
        }
      : undefined;

  const messages: ChatMessage[] = [];
  // Where each message came from in the body, to name a parameter as the client sent it.
  const sources: string[] = [];
  if (body.instructions != null && body.instructions !== '') {
    messages.push({ role: 'system', content: body.instructions });
    sources.push('instructions');
  }
  // The previous responses' items come first; a parameter in them is named previous_response_id.
  const items = [...conversation.history, ...conversation.input];
  const offset = conversation.history.length;
  items.forEach((item, at) => {
    const i = at - offset;
    if (item.type === 'function_call') {
      // An answer's text and calls, or consecutive calls, are one assistant turn, as chat carries them.
      const last = messages.at(-1);
      const before = items[at - 1];
      const call = { id: item.call_id, name: item.name, arguments: item.arguments };
      if (last?.role === 'assistant' && before !== undefined && (before.type === 'function_call' || ('role' in before && before.role === 'assistant'))) {
        (last.toolCalls ??= []).push(call);
        return;
      }
      messages.push({ role: 'assistant', content: null, toolCalls: [call] });
    } else if (item.type === 'function_call_output') {
      messages.push({ role: 'tool', content: outputOf(item.output, i), toolCallId: item.call_id });
    } else {
      messages.push(messageOf(item, i));
    }
    sources.push(i < 0 ? 'previous_response_id' : `input[${i}]`);
  });
  const paramOf = (param: string | null) => {
    if (param !== null && param in RESPONSES_NAMES) return RESPONSES_NAMES[param]!;
    const found = param === null ? null : /^messages\[(\d+)\](.*)$/.exec(param);
    if (!found) return param;
    return `${sources[Number(found[1])] ?? 'input'}${found[2]!.replace(/\.image_url\.url$/, '.image_url')}`;
  };

  const sampling: SamplingParams = {};
  if (body.temperature != null) sampling.temperature = body.temperature;
  if (body.top_p != null) sampling.topP = body.top_p;
  if (body.max_output_tokens != null) sampling.maxTokens = body.max_output_tokens;

  const format = body.text?.format;
  const guided: Guided | undefined =
    format?.type === 'json_schema' ? { kind: 'json', schema: format.schema } : format?.type === 'json_object' ? { kind: 'json', schema: { type: 'object' } } : undefined;
  return { input: { kind: 'chat', messages }, sampling, ...(guided ? { guided } : {}), ...(toolUse ? { tools: toolUse } : {}), paramOf };
}

/** Chat's names of what a Responses body sets otherwise, for refusals an engine words in chat's terms. */
const RESPONSES_NAMES: Record<string, string> = {
  max_tokens: 'max_output_tokens',
  guided_json: 'text.format',
  response_format: 'text.format',
};

/** A function_call_output's output: text, or input_text parts joined (a tool turn is text to the templates). */
function outputOf(output: string | unknown[], index: number): string {
  if (typeof output === 'string') return output;
  return output
    .map((part, j) => {
      const p = part as { type?: unknown; text?: unknown };
      if (p?.type === 'input_text' && typeof p.text === 'string') return p.text;
      throw new WireError(400, 'unsupported_parameter', 'A function_call_output takes text: a string or input_text parts', `input[${index}].output[${j}]`);
    })
    .join('');
}

function messageOf(item: Extract<InputItem, { role: string }>, index: number): ChatMessage {
  const role = item.role === 'developer' ? 'system' : item.role;
  if (typeof item.content === 'string') return { role, content: item.content };
  const parts: ContentPart[] = item.content.map((part, j) => {
    switch (part.type) {
      case 'input_text':
      case 'output_text':
        return { type: 'text', text: part.text };
      case 'refusal':
        return { type: 'text', text: part.refusal };
      case 'input_image':
        if (part.image_url == null) {
          throw new WireError(400, 'unsupported_parameter', 'An input_image needs image_url (an http(s) URL or a base64 data URI): files are not kept here', `input[${index}].content[${j}].file_id`);
        }
        return { type: 'image_url', image_url: { url: part.image_url } };
    }
  });
  // Templates take text as one string when there is no image; keep parts only for vision.
  return parts.some((p) => p.type === 'image_url') ? { role, content: parts } : { role, content: parts.map((p) => (p as { text: string }).text).join('') };
}
