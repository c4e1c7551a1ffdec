import type { GrammarRule } from './json-schema-bounds.js';
import type { EngineErrorReason, FinishReason, GenerationInput, SamplingParams, TokenLogprob, ToolDefinition, Usage } from '../../engine/text-engine.js';

/**
 * Messages between the llama engine and its worker process (one per model file), over the IPC
 * channel of child_process.fork. Types only: the worker runs under Node's type stripping.
 */

/**
 * A grammar the worker builds: GBNF the parent already made (regex, choice) or a JSON schema for
 * node-llama-cpp, with the rules that stand for its placeholder consts (json-schema-bounds.ts).
 */
export type WorkerGrammar = { kind: 'gbnf'; gbnf: string; param: 'guided_regex' | 'guided_choice' } | {
      kind: 'json';
      schema: Record<string, unknown>;
      rules: GrammarRule[];
      /** The schema is one tool call: up to `max` of them, one a line, or (orText) text that does not begin with "{". */
      calls?: { max: number; orText: boolean };
    };

/**
 * The tools shown to the model: through its chat template when the template renders tools,
 * else as `preamble`, a system text the parent wrote.
 */
export interface WorkerTools {
  definitions: ToolDefinition[];
  preamble: string;
}

export interface WorkerLoadOptions {
  modelPath: string;
  sequences: number;
  /** Tokens per sequence; null takes the model's trained context length. */
  contextSize: number | null;
  threads: number;
}

export type ToWorker =
  | { type: 'load'; options: WorkerLoadOptions }
  | { type: 'generate'; id: number; slot: number; input: GenerationInput; sampling: SamplingParams; grammar?: WorkerGrammar; tools?: WorkerTools; logprobs?: { top: number } }
  | { type: 'abort'; id: number }
  | { type: 'tokenize'; id: number; input: GenerationInput; tools?: WorkerTools }
  /** One vector per input (a text, or token ids), from the worker's embedding context. */
  | { type: 'embed'; id: number; inputs: (string | number[])[] };

export type FromWorker =
  | { type: 'ready'; contextLength: number }
  | { type: 'load_failed'; error: string }
  /** The prompt fits and the grammar is built: nothing left to refuse, the prompt is being evaluated. */
  | { type: 'accepted'; id: number }
  /** `logprobs` (when asked for): the tokens sampled since the last delta. */
  | { type: 'delta'; id: number; text: string; logprobs?: TokenLogprob[] }
  | { type: 'done'; id: number; finishReason: FinishReason; usage: Usage; tokenIds: number[] }
  /** The sequence of an aborted generation is cleared and free again. */
  | { type: 'aborted'; id: number }
  | { type: 'failed'; id: number; reason: EngineErrorReason; message: string; param?: string }
  | { type: 'tokens'; id: number; tokens: number[] }
  | { type: 'embeddings'; id: number; vectors: number[][]; promptTokens: number };
