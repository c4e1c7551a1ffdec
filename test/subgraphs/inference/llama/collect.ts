import type { FinishReason, GenerationEvent, Usage } from '../../../../subgraphs/inference/engine/text-engine.js';

export interface Collected {
  text: string;
  deltas: number;
  finishReason: FinishReason;
  usage: Usage;
  extensions?: Record<string, unknown>;
}

/** Reads a generation to its end, as a non-streaming answer would. */
export async function collect(events: AsyncIterable<GenerationEvent>): Promise<Collected> {
  let text = '';
  let deltas = 0;
  for await (const event of events) {
    if (event.type === 'delta') {
      text += event.text;
      deltas++;
    } else if (event.type === 'done') return { text, deltas, finishReason: event.finishReason, usage: event.usage, extensions: event.extensions };
  }
  throw new Error('The generation ended without a done event');
}
