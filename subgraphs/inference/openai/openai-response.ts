import { randomUUID } from 'node:crypto';
import type { FinishReason, Usage } from '../engine/text-engine.js';

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

export function fullResponse(kind: Kind, c: Completion, text: string, finishReason: FinishReason, usage: Usage, extensions: Record<string, unknown> | undefined) {
  const choice =
    kind === 'chat'
      ? { index: 0, message: { role: 'assistant', content: text, refusal: null }, logprobs: null, finish_reason: finishReason }
      : { index: 0, text, logprobs: null, finish_reason: finishReason };
  return {
    id: c.id,
    object: kind === 'chat' ? 'chat.completion' : 'text_completion',
    created: c.created,
    model: c.model,
    choices: [choice],
    usage: usageOf(usage),
    ...publicExtensions(extensions),
  };
}

/**
 * One streamed chunk. Chat's first chunk carries the role; the last carries finish_reason with an
 * empty delta. With include_usage every chunk has `usage: null` and a final chunk with no choices
 * carries the usage, as OpenAI streams it.
 */
export function chunk(kind: Kind, c: Completion, piece: { text?: string; role?: boolean; finishReason?: FinishReason }, includeUsage: boolean) {
  const finish = piece.finishReason ?? null;
  const choice =
    kind === 'chat'
      ? { index: 0, delta: finish ? {} : { ...(piece.role ? { role: 'assistant' } : {}), content: piece.text ?? '' }, logprobs: null, finish_reason: finish }
      : { index: 0, text: piece.text ?? '', logprobs: null, finish_reason: finish };
  return {
    id: c.id,
    object: kind === 'chat' ? 'chat.completion.chunk' : 'text_completion',
    created: c.created,
    model: c.model,
    choices: [choice],
    ...(includeUsage ? { usage: null } : {}),
  };
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
