import { describe, expect, it } from 'vitest';
import { readSseEvents, type SseEvent } from '../../../../subgraphs/inference/engines/openai-upstream/sse-events.js';

async function events(...chunks: (string | Buffer)[]): Promise<SseEvent[]> {
  const out: SseEvent[] = [];
  for await (const event of readSseEvents((async function* () {
    yield* chunks;
  })()))
    out.push(event);
  return out;
}

describe('readSseEvents', () => {
  it('joins data lines of one event and ends events at blank lines, whatever the chunking', async () => {
    const text = 'data: {"a":1}\n\ndata: first\ndata: second\n\n: a comment ping\n\nevent: error\ndata: {"e":2}\n\ndata: [DONE]\n\n';
    const whole = await events(text);
    expect(whole).toEqual([
      { event: 'message', data: '{"a":1}' },
      { event: 'message', data: 'first\nsecond' },
      { event: 'error', data: '{"e":2}' },
      { event: 'message', data: '[DONE]' },
    ]);
    // One byte at a time, and with CRLF and lone CR line ends.
    expect(await events(...[...text].map((char) => char))).toEqual(whole);
    expect(await events(text.replace(/\n/g, '\r\n'))).toEqual(whole);
    expect(await events(...[...text.replace(/\n/g, '\r\n')])).toEqual(whole);
    expect(await events(text.replace(/\n/g, '\r'))).toEqual(whole);
  });

  it('decodes UTF-8 split across chunks', async () => {
    const bytes = Buffer.from('data: {"t":"héllo wörld 🚀"}\n\n');
    const split = [bytes.subarray(0, 14), bytes.subarray(14, 15), bytes.subarray(15, 27), bytes.subarray(27)];
    expect(await events(...split)).toEqual([{ event: 'message', data: '{"t":"héllo wörld 🚀"}' }]);
  });

  it("reads llama.cpp's bare `error:` line as an error event", async () => {
    expect(await events('data: {"x":1}\n\nerror: {"code":500,"message":"m","type":"server_error"}\n\n')).toEqual([
      { event: 'message', data: '{"x":1}' },
      { event: 'error', data: '{"code":500,"message":"m","type":"server_error"}' },
    ]);
  });

  it('keeps a last event that lacks its blank line, and drops an empty tail', async () => {
    expect(await events('data: one\n\ndata: two')).toEqual([
      { event: 'message', data: 'one' },
      { event: 'message', data: 'two' },
    ]);
    expect(await events('data: one\n\n\n')).toEqual([{ event: 'message', data: 'one' }]);
  });
});
