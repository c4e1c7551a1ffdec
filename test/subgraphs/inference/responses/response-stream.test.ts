import { Stream } from 'openai/core/streaming';
import type { ResponseStreamEvent } from 'openai/resources/responses/responses';
import { describe, expect, it } from 'vitest';
import type { GenerationEvent } from '../../../../subgraphs/inference/engine/text-engine.js';
import { ResponseDraft } from '../../../../subgraphs/inference/responses/response-object.js';
import { ResponseStream } from '../../../../subgraphs/inference/responses/response-stream.js';
import { responsesSchema } from '../../../../subgraphs/inference/responses/responses-request.js';

/**
 * A Response's event stream for an answer with tool calls, as the official openai client reads
 * it: each function_call item is added with empty arguments, its arguments follow as deltas, and
 * it is done before the next item is added.
 */
async function eventsOf(pieces: Exclude<GenerationEvent, { type: 'done' }>[], withTools = true): Promise<ResponseStreamEvent[]> {
  const draft = new ResponseDraft(responsesSchema(false).parse({ model: 'm', input: 'x', tools: [{ type: 'function', name: 'weather' }] }), false);
  let sse = '';
  const stream = new ResponseStream(draft, (chunk) => (sse += chunk), withTools);
  stream.open();
  for (const piece of pieces) stream.piece(piece);
  await stream.end('tool_calls', { promptTokens: 3, completionTokens: 5 }, async () => {});
  const read: ResponseStreamEvent[] = [];
  for await (const event of Stream.fromSSEResponse<ResponseStreamEvent>(new Response(sse, { headers: { 'content-type': 'text/event-stream' } }), new AbortController())) read.push(event);
  return read;
}

describe('ResponseStream', () => {
  it('streams calls alone as function_call items, each closed before the next', async () => {
    const events = await eventsOf([
      { type: 'tool_call', index: 0, id: 'call_a', name: 'weather', arguments: '' },
      { type: 'tool_call', index: 0, arguments: '{"city":' },
      { type: 'tool_call', index: 0, arguments: '"Oslo"}' },
      { type: 'tool_call', index: 1, id: 'call_b', name: 'weather', arguments: '{}' },
    ]);
    expect(events.map((e) => e.type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    const added = events[2]!;
    expect(added).toMatchObject({ output_index: 0, item: { type: 'function_call', call_id: 'call_a', name: 'weather', arguments: '', status: 'in_progress' } });
    const id = added.type === 'response.output_item.added' ? added.item.id : undefined;
    expect(id).toMatch(/^fc_/);
    expect(events[3]).toMatchObject({ item_id: id, output_index: 0, delta: '{"city":' });
    expect(events[5]).toMatchObject({ item_id: id, output_index: 0, arguments: '{"city":"Oslo"}' });
    expect(events[6]).toMatchObject({ output_index: 0, item: { id, arguments: '{"city":"Oslo"}', status: 'completed' } });
    expect(events[7]).toMatchObject({ output_index: 1, item: { call_id: 'call_b' } });
    const completed = events.at(-1)!;
    expect(completed.type === 'response.completed' && completed.response.output).toMatchObject([
      { type: 'function_call', id, call_id: 'call_a', arguments: '{"city":"Oslo"}' },
      { type: 'function_call', call_id: 'call_b', arguments: '{}' },
    ]);
  });

  it('closes the message before a call that follows its text', async () => {
    const events = await eventsOf([
      { type: 'delta', text: 'Looking.' },
      { type: 'tool_call', index: 0, id: 'call_a', name: 'weather', arguments: '{}' },
    ]);
    expect(events.map((e) => e.type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(events[8]).toMatchObject({ output_index: 1, item: { type: 'function_call' } });
  });
});
