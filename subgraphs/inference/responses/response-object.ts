import { randomUUID } from 'node:crypto';
import type { FinishReason, Usage } from '../engine/text-engine.js';
import type { WireError } from '../protocol/wire-error.js';
import type { ResponsesBody } from './responses-request.js';

/**
 * OpenAI's Response object and its streamed events, as its API and the openai SDK have them: an
 * assistant message with one output_text part, and a function_call item per tool call, in the
 * order the model began them. The events of a stream come in OpenAI's order, each with its
 * sequence_number.
 */

export type ResponseStatus = 'in_progress' | 'completed' | 'incomplete' | 'failed';

/** A new item or response id: 122 random bits, so that an id of the one keyless scope cannot be guessed. */
export const newId = (prefix: string) => `${prefix}_${randomUUID().replace(/-/g, '')}`;

/** A function_call output item as it grows from the engine's tool_call pieces. */
export interface FunctionCallItem {
  id: string;
  call_id: string;
  name: string;
  arguments: string;
}

/** One response under way: its ids, its output items in order, and the request fields it echoes. */
export class ResponseDraft {
  readonly id = newId('resp');
  readonly messageId = newId('msg');
  readonly createdAt = Math.floor(Date.now() / 1000);
  private sequence = 0;
  // Output items in the order they began: the message, or a tool call by its engine index.
  private readonly items: ('message' | number)[] = [];
  private readonly calls = new Map<number, FunctionCallItem>();

  /** `store`: whether the response is kept, as its object says. */
  constructor(
    private readonly body: ResponsesBody,
    readonly store: boolean,
  ) {}

  /** Whether the message item has begun. */
  get messageOpen(): boolean {
    return this.items.includes('message');
  }

  /** Begins the message item; returns its output index. */
  openMessage(): number {
    if (!this.messageOpen) this.items.push('message');
    return this.items.indexOf('message');
  }

  /** Adds a piece of tool call `index`: a new call when first seen. */
  callPiece(index: number, piece: { id?: string; name?: string; arguments: string }): { item: FunctionCallItem; outputIndex: number; added: boolean } {
    let item = this.calls.get(index);
    const added = item === undefined;
    if (!item) {
      item = { id: newId('fc'), call_id: piece.id ?? newId('call'), name: piece.name ?? '', arguments: '' };
      this.calls.set(index, item);
      this.items.push(index);
    } else if (piece.name) {
      item.name += piece.name;
    }
    item.arguments += piece.arguments;
    return { item, outputIndex: this.items.indexOf(index), added };
  }

  /** Whether tool call `index` has begun. */
  hasCall(index: number): boolean {
    return this.calls.has(index);
  }

  /** The calls made so far, by output index. */
  get callItems(): { item: FunctionCallItem; outputIndex: number }[] {
    return this.items.flatMap((entry, outputIndex) => (entry === 'message' ? [] : [{ item: this.calls.get(entry)!, outputIndex }]));
  }

  /** A function_call output item. */
  functionCall(item: FunctionCallItem, status: 'in_progress' | 'completed' | 'incomplete') {
    return { type: 'function_call', ...item, status };
  }

  /** The message item with `text`; in_progress while streaming. */
  message(text: string | null, status: 'in_progress' | 'completed' | 'incomplete') {
    return {
      id: this.messageId,
      type: 'message',
      status,
      role: 'assistant',
      content: text === null ? [] : [outputText(text)],
    };
  }

  /** The Response object: output and usage once it has ended. */
  response(status: ResponseStatus, end?: { text: string; finishReason: FinishReason; usage: Usage } | { error: WireError; text: string | null; usage: Usage | null }) {
    const body = this.body;
    const incomplete = end && 'finishReason' in end && end.finishReason === 'length';
    const format = body.text?.format ?? { type: 'text' };
    return {
      id: this.id,
      object: 'response',
      created_at: this.createdAt,
      status,
      background: false,
      error: end && 'error' in end ? { code: end.error.code, message: end.error.message } : null,
      incomplete_details: incomplete ? { reason: 'max_output_tokens' } : null,
      instructions: body.instructions ?? null,
      max_output_tokens: body.max_output_tokens ?? null,
      metadata: body.metadata ?? {},
      model: body.model,
      output: end ? this.output(end.text, status === 'completed' ? 'completed' : 'incomplete') : [],
      parallel_tool_calls: body.parallel_tool_calls ?? true,
      previous_response_id: body.previous_response_id ?? null,
      reasoning: { effort: null, summary: null },
      store: this.store,
      temperature: body.temperature ?? null,
      text: { format },
      tool_choice: body.tool_choice ?? 'auto',
      tools: body.tools ?? [],
      top_p: body.top_p ?? null,
      truncation: 'disabled',
      usage: end?.usage ? usageOf(end.usage) : null,
      user: body.user ?? null,
    };
  }

  /** A streamed event, with the next sequence number, as server-sent event text. */
  event(type: string, fields: Record<string, unknown>): string {
    return `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: this.sequence++, ...fields })}\n\n`;
  }

  /** Where a text event sits: the message, its one part. */
  get at() {
    return { item_id: this.messageId, output_index: this.openMessage(), content_index: 0 };
  }

  // An answer that is tool calls alone has no message; any other answer has one, empty or not.
  private output(text: string | null, status: 'completed' | 'incomplete') {
    if (text !== null && (text !== '' || this.calls.size === 0)) this.openMessage();
    return this.items.flatMap((entry): object[] => {
      if (entry !== 'message') return [this.functionCall(this.calls.get(entry)!, status)];
      return text === null ? [] : [this.message(text, status)];
    });
  }
}

export function outputText(text: string) {
  return { type: 'output_text', text, annotations: [], logprobs: [] };
}

export function usageOf(usage: Usage) {
  return {
    input_tokens: usage.promptTokens,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: usage.completionTokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: usage.promptTokens + usage.completionTokens,
  };
}
