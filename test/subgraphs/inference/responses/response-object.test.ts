import { describe, expect, it } from 'vitest';
import { ResponseDraft } from '../../../../subgraphs/inference/responses/response-object.js';
import { responsesSchema } from '../../../../subgraphs/inference/responses/responses-request.js';

/** A Response's output items from an engine's text and tool_call pieces, in OpenAI's shape. */
const draftOf = () => new ResponseDraft(responsesSchema(false).parse({ model: 'm', input: 'x', tools: [{ type: 'function', name: 'weather' }] }), false);
const usage = { promptTokens: 3, completionTokens: 5 };

describe('ResponseDraft output', () => {
  it('is function_call items alone when the answer is calls, gathered from their pieces in the order begun', () => {
    const draft = draftOf();
    draft.callPiece(0, { id: 'call_a', name: 'weather', arguments: '{"city":' });
    draft.callPiece(1, { id: 'call_b', name: 'weather', arguments: '' });
    draft.callPiece(0, { arguments: '"Oslo"}' });
    draft.callPiece(1, { arguments: '{"city":"Bergen"}' });
    const response = draft.response('completed', { text: '', finishReason: 'tool_calls', usage });
    expect(response.output).toEqual([
      { type: 'function_call', id: expect.stringMatching(/^fc_[0-9a-f]{32}$/), call_id: 'call_a', name: 'weather', arguments: '{"city":"Oslo"}', status: 'completed' },
      { type: 'function_call', id: expect.stringMatching(/^fc_/), call_id: 'call_b', name: 'weather', arguments: '{"city":"Bergen"}', status: 'completed' },
    ]);
    expect(response.usage).toMatchObject({ input_tokens: 3, output_tokens: 5, total_tokens: 8 });
  });

  it('puts the message first when text came before the calls, and gives a call without an id one', () => {
    const draft = draftOf();
    draft.openMessage();
    draft.callPiece(0, { name: 'weather', arguments: '{}' });
    const { output } = draft.response('completed', { text: 'Looking.', finishReason: 'tool_calls', usage });
    expect(output).toMatchObject([
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Looking.' }] },
      { type: 'function_call', call_id: expect.stringMatching(/^call_/), name: 'weather', arguments: '{}' },
    ]);
  });

  it('is one message, empty or not, when there is no call', () => {
    expect(draftOf().response('completed', { text: '', finishReason: 'stop', usage }).output).toMatchObject([{ type: 'message', content: [{ type: 'output_text', text: '' }] }]);
  });
});
