import type { z } from 'zod';
import type { GenerationInput, Guided, SamplingParams } from '../engine/text-engine.js';
import { validationError } from '../protocol/wire-error.js';
import { nestsDeeperThan } from '../../../core/json-depth.js';
import { tooDeep } from '../protocol/wire-body.js';
import { chatSchema, completionSchema, guidedOf, inputOf, messagesOf, samplingOf, tokenizeSchema, type ChatBody, type CompletionBody, type GenerationBody } from '../protocol/generation-request.js';
import { GenerationInputError, graphqlParam } from './generation.errors.js';
import { ContentPartType, type ChatCompletionInput, type CompletionInput, type GenerationParamsInput, type MessageInput, type TokenizeInput } from './generation.inputs.js';

/** What a GraphQL generation input asks for, in the engine-neutral terms GenerationService takes. */
export interface GenerationRequest {
  model: string;
  provider?: string;
  input: GenerationInput;
  sampling: SamplingParams;
  guided?: Guided;
}

/** Drops absent (null or undefined) fields: the zod schemas treat a given null as a value. */
function present(entries: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(entries).filter(([, value]) => value !== undefined && value !== null));
}

// Content and parts are both nullable in the schema, as are a part's text and imageUrl: one
// message takes exactly one of content and parts, one part exactly the field of its type. Checked
// here, because the wire schema's union of string and parts names only `content` when it fails.
function wireMessages(messages: readonly MessageInput[]): unknown[] {
  return messages.map((message, i) => {
    const hasContent = message.content != null;
    const hasParts = message.parts != null;
    if (hasContent === hasParts) {
      throw new GenerationInputError(hasContent ? 'Give a message either content or parts, not both' : 'A message needs content (text) or parts', `messages[${i}].${hasContent ? 'parts' : 'content'}`, hasContent ? 'invalid_value' : 'missing_parameter');
    }
    if (hasContent) return { role: message.role, content: message.content };
    const content = message.parts!.map((part, j) => {
      const [field, other] = part.type === ContentPartType.TEXT ? (['text', 'imageUrl'] as const) : (['imageUrl', 'text'] as const);
      const param = `messages[${i}].parts[${j}]`;
      if (part[field] == null) throw new GenerationInputError(`A ${part.type === ContentPartType.TEXT ? 'TEXT' : 'IMAGE_URL'} part needs ${field}`, `${param}.${field}`, 'missing_parameter');
      if (part[other] != null) throw new GenerationInputError(`A ${part.type === ContentPartType.TEXT ? 'TEXT' : 'IMAGE_URL'} part takes no ${other}`, `${param}.${other}`, 'invalid_value');
      return part.type === ContentPartType.TEXT ? { type: 'text', text: part.text } : { type: 'image_url', image_url: { url: part.imageUrl } };
    });
    return { role: message.role, content };
  });
}

function wireParams(input: GenerationParamsInput): Record<string, unknown> {
  return present({
    model: input.model,
    provider: input.provider,
    temperature: input.temperature,
    top_p: input.topP,
    top_k: input.topK,
    min_p: input.minP,
    max_tokens: input.maxTokens,
    stop: input.stop,
    seed: input.seed,
    presence_penalty: input.presencePenalty,
    frequency_penalty: input.frequencyPenalty,
    repetition_penalty: input.repetitionPenalty,
    top_a: input.topA,
    tfs: input.tfs,
    typical_p: input.typicalP,
    no_repeat_ngram_size: input.noRepeatNgramSize,
    dry_multiplier: input.dryMultiplier,
    dry_base: input.dryBase,
    dry_allowed_length: input.dryAllowedLength,
    mirostat: input.mirostat,
    guided_json: input.guidedJson,
    guided_regex: input.guidedRegex,
    guided_choice: input.guidedChoice,
  });
}

/** Validates `body` with the gateway interface's schema; a refusal names the GraphQL input's field. */
function parse<T>(schema: z.ZodType<T>, body: unknown, maxDepth: number): T {
  if (nestsDeeperThan(body, maxDepth)) throw new GenerationInputError(tooDeep(maxDepth).message, undefined, 'invalid_body');
  const parsed = schema.safeParse(body, { reportInput: true });
  if (parsed.success) return parsed.data;
  const wire = validationError('gateway', parsed.error);
  const param = wire.param === null ? undefined : graphqlParam(wire.param);
  const message = wire.param === null ? wire.message : wire.message.split(wire.param).join(param);
  throw new GenerationInputError(message, param, wire.code);
}

function requestOf(body: ChatBody | CompletionBody): GenerationRequest {
  const guided = guidedOf(body);
  if (Array.isArray(guided)) throw new GenerationInputError(guided[1].replace(/guided_(json|regex|choice)/g, (name) => graphqlParam(name)), graphqlParam(guided[0]));
  return {
    model: body.model,
    ...(body.provider !== undefined ? { provider: body.provider } : {}),
    input: inputOf(body),
    sampling: samplingOf(body as GenerationBody),
    ...(guided ? { guided } : {}),
  };
}

/**
 * A chat completion input as the gateway interface's body, checked by its schema (the same
 * ranges and conflicts as over REST) and turned into the engine's terms.
 */
export function chatRequestOf(input: ChatCompletionInput, maxDepth: number): GenerationRequest {
  return requestOf(parse(chatSchema('gateway'), { ...wireParams(input), messages: wireMessages(input.messages) }, maxDepth));
}

/** A raw completion input, checked and turned like a chat's. */
export function completionRequestOf(input: CompletionInput, maxDepth: number): GenerationRequest {
  return requestOf(parse(completionSchema('gateway'), { ...wireParams(input), prompt: input.prompt }, maxDepth));
}

/** A tokenize input: the model, the provider if named, and the prompt or the messages. */
export function tokenizeRequestOf(input: TokenizeInput, maxDepth: number): Omit<GenerationRequest, 'sampling' | 'guided'> {
  const body = parse(
    tokenizeSchema,
    present({ model: input.model, provider: input.provider, prompt: input.prompt, messages: input.messages == null ? undefined : wireMessages(input.messages) }),
    maxDepth,
  );
  if ((body.messages === undefined) === (body.prompt === undefined)) {
    throw new GenerationInputError(body.messages ? 'Give either messages or prompt, not both' : 'Give messages or prompt', body.messages ? 'prompt' : 'messages', body.messages ? 'invalid_value' : 'missing_parameter');
  }
  return {
    model: body.model,
    ...(body.provider !== undefined ? { provider: body.provider } : {}),
    input: body.messages ? { kind: 'chat', messages: messagesOf(body.messages) } : { kind: 'completion', prompt: body.prompt! },
  };
}
