import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openaiClient, startInferencePlatform, type InferencePlatform } from './inference-test-kit.js';

/**
 * logprobs on the embedded llama engine (the random-weight `tiny`) through Service T with the
 * official openai client, in OpenAI's shapes: chat's content[] with top_logprobs, streamed per
 * chunk, and completions' tokens / token_logprobs / top_logprobs / text_offset.
 */
let running: InferencePlatform;
let client: OpenAI;

beforeAll(async () => {
  running = await startInferencePlatform({}, { contextSize: 512 });
  const key = await running.platform.issueKey('acme', 'text');
  client = openaiClient(running.platform.baseUrl, '/inference/text', key);
}, 120_000);

afterAll(async () => {
  await running?.close();
});

const sorted = (figures: number[]) => [...figures].sort((a, b) => b - a);

describe('logprobs on the embedded llama engine through Service T', () => {
  it('answers chat logprobs with top_logprobs: one entry a token, whose bytes make up the content', async () => {
    const answer = await client.chat.completions.create({ model: 'tiny', messages: [{ role: 'user', content: 'Hi' }], logprobs: true, top_logprobs: 2, max_tokens: 12, seed: 3 });
    const choice = answer.choices[0]!;
    const content = choice.logprobs!.content!;
    expect(content.length).toBe(answer.usage!.completion_tokens - (choice.finish_reason === 'stop' ? 1 : 0));
    expect(Buffer.from(content.flatMap((token) => token.bytes!)).toString('utf8')).toBe(choice.message.content);
    for (const token of content) {
      expect(token.logprob).toBeLessThanOrEqual(0);
      expect(token.top_logprobs).toHaveLength(2);
      expect(token.top_logprobs.map((alt) => alt.logprob)).toEqual(sorted(token.top_logprobs.map((alt) => alt.logprob)));
      expect(token.logprob).toBeLessThanOrEqual(token.top_logprobs[0]!.logprob + 1e-9);
    }
  }, 120_000);

  it('streams each chunk with the logprobs of its tokens', async () => {
    const stream = await client.chat.completions.create({ model: 'tiny', messages: [{ role: 'user', content: 'Hi' }], logprobs: true, max_tokens: 12, seed: 4, stream: true });
    let text = '';
    const bytes: number[] = [];
    for await (const chunk of stream) {
      const choice = chunk.choices[0];
      if (!choice?.delta.content) continue;
      text += choice.delta.content;
      for (const token of choice.logprobs!.content!) {
        bytes.push(...token.bytes!);
        expect(token.top_logprobs).toEqual([]);
      }
    }
    expect(text.length).toBeGreaterThan(0);
    expect(Buffer.from(bytes).toString('utf8')).toBe(text);
  }, 120_000);

  it('answers completions logprobs as tokens, token_logprobs, top_logprobs and text_offset', async () => {
    const answer = await client.completions.create({ model: 'tiny', prompt: 'Once', logprobs: 2, max_tokens: 12, seed: 5 });
    const choice = answer.choices[0]!;
    const logprobs = choice.logprobs!;
    expect(logprobs.tokens!.length).toBe(logprobs.token_logprobs!.length);
    expect(logprobs.top_logprobs!.length).toBe(logprobs.tokens!.length);
    let offset = 0;
    for (const [i, token] of logprobs.tokens!.entries()) {
      expect(logprobs.text_offset![i]).toBe(offset);
      offset += token.length;
      expect(logprobs.token_logprobs![i]).toBeLessThanOrEqual(0);
      expect(Object.keys(logprobs.top_logprobs![i]!).length).toBeLessThanOrEqual(2);
    }
  }, 120_000);
});
