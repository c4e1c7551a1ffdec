import { randomUUID } from 'node:crypto';
import type { FinishReason, TokenLogprob, ToolCall, Usage } from '../engine/text-engine.js';

/**
 * OpenAI's response objects, exactly as its API and the openai SDK have them: chat.completion,
 * text_completion and their streamed chunks, usage. Our additions are extra
 * fields only (the OCR model's `ocr` reading), which OpenAI's clients pass through untouched.
 * Model listings are the protocol's (protocol/model-listing.ts): GraphQL lists the same entries.
 */

export type Kind = 'chat' | 'completion';

export interface Completion {
  id: string;
  created: number;
  model: string;
}

export function newCompletion(kind: Kind, model: string): Completion {
  return { id: `${kind === 'chat' ? 'chatcmpl' : 'cmpl'}-${randomUUID().replace(/-/g, '')}`, created: Math.floor(Date.now() / 1000), model };
}

export function usageOf(usage: Usage): { prompt_tokens: number; completion_tokens: number; total_tokens: number } {
  return { prompt_tokens: usage.promptTokens, completion_tokens: usage.completionTokens, total_tokens: usage.promptTokens + usage.completionTokens };
}

/** The engine extensions a client may read: the OCR model's confidence and readings. Others (token ids) stay inside. */
export function publicExtensions(extensions: Record<string, unknown> | undefined): Record<string, unknown> {
  return extensions && 'ocr' in extensions ? { ocr: extensions.ocr } : {};
}

/** OpenAI's tool_calls entries of an assistant message. */
export function toolCallsOf(calls: readonly ToolCall[]) {
  return calls.map((call) => ({ id: call.id, type: 'function' as const, function: { name: call.name, arguments: call.arguments } }));
}

/** OpenAI's choice.logprobs: chat's {content, refusal}, completions' parallel arrays with text offsets from `offset`. */
export function logprobsBody(kind: Kind, tokens: readonly TokenLogprob[] | undefined, offset = 0) {
  if (!tokens) return null;
  if (kind === 'chat') {
    return { content: tokens.map((t) => ({ token: t.token, logprob: t.logprob, bytes: t.bytes, top_logprobs: t.top.map((alt) => ({ token: alt.token, logprob: alt.logprob, bytes: alt.bytes })) })), refusal: null };
  }
  const textOffset: number[] = [];
  for (const t of tokens) {
    textOffset.push(offset);
    offset += t.token.length;
  }
  return {
    tokens: tokens.map((t) => t.token),
    token_logprobs: tokens.map((t) => t.logprob),
    top_logprobs: tokens.map((t) => Object.fromEntries(t.top.map((alt) => [alt.token, alt.logprob]))),
    text_offset: textOffset,
  };
}

/** One choice of a whole answer: its text, tool calls, log probabilities and why it ended. */
export interface ChoiceAnswer {
  text: string;
  finishReason: FinishReason;
  calls: readonly ToolCall[];
  tokens?: readonly TokenLogprob[];
}

export function fullResponse(kind: Kind, c: Completion, answers: readonly ChoiceAnswer[], usage: Usage, extensions: Record<string, unknown> | undefined) {
  const choices = answers.map(({ text, finishReason, calls, tokens }, index) => {
    // A turn that is calls alone has content null, as OpenAI answers it.
    const message = calls.length ? { role: 'assistant', content: text === '' ? null : text, refusal: null, tool_calls: toolCallsOf(calls) } : { role: 'assistant', content: text, refusal: null };
    return kind === 'chat'
      ? { index, message, logprobs: logprobsBody(kind, tokens), finish_reason: finishReason }
      : { index, text, logprobs: logprobsBody(kind, tokens), finish_reason: finishReason };
  });
  return {
    id: c.id,
    object: kind === 'chat' ? 'chat.completion' : 'text_completion',
    created: c.created,
    model: c.model,
    choices,
    usage: usageOf(usage),
    ...publicExtensions(extensions),
  };
}

/**
 * One streamed chunk. Chat's first chunk carries the role; the last carries finish_reason with an
 * empty delta. With include_usage every chunk has `usage: null` and a final chunk with no choices
 * carries the usage, as OpenAI streams it.
 */
export function chunk(
  kind: Kind,
  c: Completion,
  piece: { choice?: number; text?: string; role?: boolean; finishReason?: FinishReason; toolCall?: ToolCallPiece; logprobs?: { tokens: readonly TokenLogprob[]; offset: number } },
  includeUsage: boolean,
) {
  const logprobs = piece.logprobs ? logprobsBody(kind, piece.logprobs.tokens, piece.logprobs.offset) : null;
  const finish = piece.finishReason ?? null;
  const delta = finish ? {} : piece.toolCall ? { tool_calls: [toolCallDelta(piece.toolCall)] } : { ...(piece.role ? { role: 'assistant' } : {}), content: piece.text ?? '' };
  const choice =
    kind === 'chat'
      ? { index: piece.choice ?? 0, delta, logprobs, finish_reason: finish }
      : { index: piece.choice ?? 0, text: piece.text ?? '', logprobs, finish_reason: finish };
  return {
    id: c.id,
    object: kind === 'chat' ? 'chat.completion.chunk' : 'text_completion',
    created: c.created,
    model: c.model,
    choices: [choice],
    ...(includeUsage ? { usage: null } : {}),
  };
}

/** An id for a call whose engine gave none (OpenAI's call_ prefix). */
export function newCallId(): string {
  return `call_${randomUUID().replace(/-/g, '').slice(0, 24)}`;
}

/** A piece of a streamed tool call: its first carries id and name, the rest more arguments. */
export interface ToolCallPiece {
  index: number;
  id?: string;
  name?: string;
  arguments: string;
}

// OpenAI's delta: {index, id, type, function: {name, arguments: ''}} first, then {index, function: {arguments}}.
function toolCallDelta(piece: ToolCallPiece) {
  return piece.id !== undefined
    ? { index: piece.index, id: piece.id, type: 'function', function: { name: piece.name ?? '', arguments: piece.arguments } }
    : { index: piece.index, function: { arguments: piece.arguments } };
}

export function usageChunk(kind: Kind, c: Completion, usage: Usage, extensions: Record<string, unknown> | undefined) {
  return {
    id: c.id,
    object: kind === 'chat' ? 'chat.completion.chunk' : 'text_completion',
    created: c.created,
    model: c.model,
    choices: [],
    usage: usageOf(usage),
    ...publicExtensions(extensions),
  };
}
