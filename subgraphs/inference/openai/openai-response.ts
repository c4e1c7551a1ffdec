import { randomUUID } from 'node:crypto';
import type { FinishReason, Usage } from '../engine/text-engine.js';
import type { ImageModel, ProviderModel } from '../provider-registry/provider-registry.js';

/**
 * OpenAI's response objects, exactly as its API and the openai SDK have them: chat.completion,
 * text_completion and their streamed chunks, usage, model list entries. Our additions are extra
 * fields only (a model's context length and input modalities; the OCR model's `ocr` reading),
 * which OpenAI's clients pass through untouched.
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

// The listing's `created`: when this process started, the same for every entry and call.
const LISTED_AT = Math.floor(Date.now() / 1000);

export interface ListedModel {
  id: string;
  object: 'model';
  created: number;
  owned_by: string;
  /** Every provider serving the id on this interface, the one in `owned_by` first. */
  providers: string[];
  /** Text models only. */
  context_length?: number;
  /** vLLM's name for the same figure, read by clients written against vLLM. */
  max_model_len?: number;
  input_modalities: ('text' | 'image')[];
  /** text for text models, image for image models (the WebUI's checkpoints). */
  output_modalities: ('text' | 'image')[];
  /** Vision models: whether an image may come as an http(s) URL, or only as a base64 data URI. */
  image_url_input?: boolean;
  status: string;
  alias_of?: string;
  available_on_current_plan?: boolean;
}

/**
 * A list entry per model id; a model several providers serve is listed once, owned by the
 * preferred provider (`prefer`, else the first). `urlImages` false lists every vision model as
 * base64-only (the gateway's rule); `onPlan` marks what the caller's plan includes.
 */
export function listedModels(models: ProviderModel[], options: { prefer?: string; urlImages: boolean | 'per-model'; onPlan?: (model: ProviderModel) => boolean }): ListedModel[] {
  const byId = new Map<string, ProviderModel[]>();
  for (const model of models) byId.set(model.id, [...(byId.get(model.id) ?? []), model]);
  return [...byId.values()].map((serving) => {
    const owner = serving.find((m) => m.provider === options.prefer) ?? serving[0]!;
    const vision = owner.model.inputModalities.includes('image');
    return {
      id: owner.id,
      object: 'model',
      created: LISTED_AT,
      owned_by: owner.provider,
      providers: [owner.provider, ...serving.filter((m) => m !== owner).map((m) => m.provider)],
      context_length: owner.model.contextLength,
      max_model_len: owner.model.contextLength,
      input_modalities: owner.model.inputModalities,
      output_modalities: ['text'],
      ...(vision ? { image_url_input: options.urlImages === 'per-model' ? serving.some((m) => m.model.urlImageInput) : options.urlImages } : {}),
      status: owner.model.status,
      ...(owner.aliasOf ? { alias_of: owner.aliasOf } : {}),
      ...(options.onPlan ? { available_on_current_plan: serving.some(options.onPlan) } : {}),
    };
  });
}

/**
 * A list entry per image model (a WebUI checkpoint, by the model name images/generations takes
 * as `model`), once whatever the number of providers serving it, owned by `prefer` when it does.
 */
export function listedImageModels(models: ImageModel[], prefer?: string): ListedModel[] {
  const byId = new Map<string, ImageModel[]>();
  for (const model of models) byId.set(model.id, [...(byId.get(model.id) ?? []), model]);
  return [...byId.values()].map((serving) => {
    const owner = serving.find((m) => m.provider === prefer) ?? serving[0]!;
    return {
      id: owner.id,
      object: 'model',
      created: LISTED_AT,
      owned_by: owner.provider,
      providers: [owner.provider, ...serving.filter((m) => m !== owner).map((m) => m.provider)],
      // A prompt, and for img2img and edits an image.
      input_modalities: ['text', 'image'],
      output_modalities: ['image'],
      status: serving.some((m) => m.status === 'ready') ? 'ready' : owner.status,
    };
  });
}
