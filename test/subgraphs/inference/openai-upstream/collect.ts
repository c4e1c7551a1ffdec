import type { GenerationEvent, GenerationRequest, TextEngine, Usage } from '../../../../subgraphs/inference/engine/text-engine.js';

/** A generation read to its end, as a non-streaming answer collects it. */
export interface Collected {
  text: string;
  deltas: string[];
  finishReason: string;
  usage: Usage;
}

/** Reads a whole generation; fails if it does not end with exactly one `done`. */
export async function collect(engine: TextEngine, request: Omit<GenerationRequest, 'signal'> & { signal?: AbortSignal }): Promise<Collected> {
  const deltas: string[] = [];
  let done: Extract<GenerationEvent, { type: 'done' }> | undefined;
  for await (const event of engine.generate({ signal: new AbortController().signal, ...request })) {
    if (done) throw new Error('an event after done');
    if (event.type === 'delta') deltas.push(event.text);
    else if (event.type === 'done') done = event;
  }
  if (!done) throw new Error('the generation ended without done');
  return { text: deltas.join(''), deltas, finishReason: done.finishReason, usage: done.usage };
}

/** The rejection of a promise, for asserting on an EngineError's reason and param. */
export async function failure(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a failure, got an answer');
}
