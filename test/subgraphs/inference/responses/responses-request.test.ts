import { describe, expect, it } from 'vitest';
import { parseWire } from '../../../../subgraphs/inference/protocol/wire-body.js';
import { WireError } from '../../../../subgraphs/inference/protocol/wire-error.js';
import { responsesCallOf, responsesSchema, type ConversationItem } from '../../../../subgraphs/inference/responses/responses-request.js';

/**
 * A Responses body with function tools, read into the engines' terms: the tools become the
 * generation's ToolUse, and a conversation's function_call / function_call_output items become
 * chat's assistant tool_calls and tool turns, as an upstream and the templates take them.
 */
const read = (body: unknown) => {
  const parsed = parseWire('serviceT', responsesSchema(false), body);
  return responsesCallOf(parsed, 400, { history: [], input: parsed.input as ConversationItem[] });
};

const weather = { type: 'function', name: 'weather', description: 'Weather in a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }, strict: true };

describe('Responses function tools', () => {
  it('passes the tools, tool_choice and parallel_tool_calls on as the generation’s tool use', () => {
    expect(read({ model: 'm', input: 'Weather in Oslo?', tools: [weather], tool_choice: 'required', parallel_tool_calls: false }).tools).toEqual({
      definitions: [{ name: 'weather', description: 'Weather in a city', parameters: weather.parameters, strict: true }],
      choice: 'required',
      parallel: false,
    });
    expect(read({ model: 'm', input: 'x', tools: [weather], tool_choice: { type: 'function', name: 'weather' } }).tools).toMatchObject({ choice: { name: 'weather' }, parallel: true });
    expect(read({ model: 'm', input: 'x', tools: [weather] }).tools).toMatchObject({ choice: 'auto' });
    // none: text only, which every model gives, so no tools go to the engine.
    expect(read({ model: 'm', input: 'x', tools: [weather], tool_choice: 'none' }).tools).toBeUndefined();
    expect(read({ model: 'm', input: 'x', tools: null, tool_choice: null, parallel_tool_calls: null }).tools).toBeUndefined();
  });

  it('reads function_call and function_call_output items as assistant tool_calls and tool turns', () => {
    const { input } = read({
      model: 'm',
      tools: [weather],
      input: [
        { role: 'user', content: 'Weather in Oslo and Bergen?' },
        { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Looking.', annotations: [] }] },
        { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'weather', arguments: '{"city":"Oslo"}', status: 'completed' },
        { type: 'function_call', call_id: 'call_2', name: 'weather', arguments: '{"city":"Bergen"}' },
        { type: 'function_call_output', call_id: 'call_1', output: '3 °C' },
        { type: 'function_call_output', call_id: 'call_2', output: [{ type: 'input_text', text: '5 ' }, { type: 'input_text', text: '°C' }] },
      ],
    });
    expect(input).toEqual({
      kind: 'chat',
      messages: [
        { role: 'user', content: 'Weather in Oslo and Bergen?' },
        {
          role: 'assistant',
          content: 'Looking.',
          toolCalls: [
            { id: 'call_1', name: 'weather', arguments: '{"city":"Oslo"}' },
            { id: 'call_2', name: 'weather', arguments: '{"city":"Bergen"}' },
          ],
        },
        { role: 'tool', content: '3 °C', toolCallId: 'call_1' },
        { role: 'tool', content: '5 °C', toolCallId: 'call_2' },
      ],
    });
    // A call alone is an assistant turn without content.
    expect(read({ model: 'm', input: [{ type: 'function_call', call_id: 'c', name: 'weather', arguments: '{}' }] }).input).toEqual({
      kind: 'chat',
      messages: [{ role: 'assistant', content: null, toolCalls: [{ id: 'c', name: 'weather', arguments: '{}' }] }],
    });
  });

  it('refuses built-in tool types by name, a named choice that is not a tool, and required without tools', () => {
    const refusal = (body: unknown) => {
      try {
        read(body);
      } catch (error) {
        return error;
      }
      throw new Error('not refused');
    };
    expect(refusal({ model: 'm', input: 'x', tools: [{ type: 'web_search' }] })).toMatchObject({ status: 400, param: 'tools[0].type', message: expect.stringContaining('tools of type "web_search" are not served here') });
    expect(refusal({ model: 'm', input: 'x', tools: [weather], tool_choice: { type: 'function', name: 'clock' } })).toMatchObject({ status: 400, param: 'tool_choice.name' });
    expect(refusal({ model: 'm', input: 'x', tool_choice: 'required' })).toMatchObject({ status: 400, param: 'tool_choice' });
    expect(refusal({ model: 'm', input: 'x', tools: [weather, weather] })).toBeInstanceOf(WireError);
  });
});
