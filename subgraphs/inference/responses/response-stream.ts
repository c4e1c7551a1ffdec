import type { FinishReason, GenerationEvent, Usage } from '../engine/text-engine.js';
import type { ResponseDraft } from './response-object.js';

/**
 * A Response's event stream from the engine's events, in OpenAI's order: response.created and
 * in_progress, then each output item added, its deltas, and done before the next is added (a
 * message with one output_text part, or a function_call with its arguments), then completed or
 * incomplete. `write` takes each event as server-sent event text.
 */
export class ResponseStream {
  private text = '';
  private readonly closed = new Set<string>();

  constructor(
    private readonly draft: ResponseDraft,
    private readonly write: (chunk: string) => void,
    private readonly withTools: boolean,
  ) {}

  /** The answer's text so far. */
  get answered(): string {
    return this.text;
  }

  open(): void {
    this.send('response.created', { response: this.draft.response('in_progress') });
    this.send('response.in_progress', { response: this.draft.response('in_progress') });
    // With tools the answer may be calls alone, so its message begins with its first text.
    if (!this.withTools) this.openMessage();
  }

  /** One engine event short of the end. */
  piece(event: Exclude<GenerationEvent, { type: 'done' }>): void {
    const draft = this.draft;
    if (event.type === 'delta') {
      if (!event.text) return;
      this.openMessage();
      this.text += event.text;
      this.send('response.output_text.delta', { ...draft.at, delta: event.text, logprobs: [] });
      return;
    }
    if (!draft.hasCall(event.index)) this.closeOpen('completed');
    const { item, outputIndex, added } = draft.callPiece(event.index, event);
    // The item is announced with empty arguments; they follow as deltas.
    if (added) this.send('response.output_item.added', { output_index: outputIndex, item: draft.functionCall({ ...item, arguments: '' }, 'in_progress') });
    if (event.arguments) this.send('response.function_call_arguments.delta', { item_id: item.id, output_index: outputIndex, delta: event.arguments });
  }

  /** Closes the items and sends the last event, once `keep` has kept the response it carries. */
  async end(finishReason: FinishReason, usage: Usage, keep: (response: ReturnType<ResponseDraft['response']>) => Promise<void>): Promise<void> {
    const status = finishReason === 'length' ? 'incomplete' : 'completed';
    if (this.draft.callItems.length === 0) this.openMessage();
    this.closeOpen(status);
    const response = this.draft.response(status, { text: this.text, finishReason, usage });
    await keep(response);
    this.send(`response.${status}`, { response });
  }

  send(type: string, fields: Record<string, unknown>): void {
    this.write(this.draft.event(type, fields));
  }

  private openMessage(): void {
    const draft = this.draft;
    if (draft.messageOpen) return;
    this.closeOpen('completed');
    const outputIndex = draft.openMessage();
    this.send('response.output_item.added', { output_index: outputIndex, item: draft.message(null, 'in_progress') });
    this.send('response.content_part.added', { ...draft.at, part: { type: 'output_text', text: '', annotations: [], logprobs: [] } });
  }

  // Items stream one after another, as OpenAI's do: a new one closes the ones before.
  private closeOpen(status: 'completed' | 'incomplete'): void {
    const draft = this.draft;
    if (draft.messageOpen && !this.closed.has(draft.messageId)) {
      this.closed.add(draft.messageId);
      const text = this.text;
      this.send('response.output_text.done', { ...draft.at, text, logprobs: [] });
      this.send('response.content_part.done', { ...draft.at, part: { type: 'output_text', text, annotations: [], logprobs: [] } });
      this.send('response.output_item.done', { output_index: draft.at.output_index, item: draft.message(text, status) });
    }
    for (const { item, outputIndex } of draft.callItems) {
      if (this.closed.has(item.id)) continue;
      this.closed.add(item.id);
      this.send('response.function_call_arguments.done', { item_id: item.id, output_index: outputIndex, name: item.name, arguments: item.arguments });
      this.send('response.output_item.done', { output_index: outputIndex, item: draft.functionCall(item, status) });
    }
  }
}
