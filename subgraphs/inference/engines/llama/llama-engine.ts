import { randomBytes } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import {
  EngineError,
  type EmbeddingRequest,
  type EmbeddingResult,
  type EngineHealth,
  type EngineModel,
  type GenerationEvent,
  type GenerationInput,
  type GenerationRequest,
  type SamplingParam,
  type TextEngine,
  type TokenizeResult,
  type ToolDefinition,
} from '../../engine/text-engine.js';
import { choiceToGbnf, regexToGbnf } from '../../engine/regex-grammar.js';
import type { WorkerGrammar, WorkerTools } from './llama-protocol.js';
import { toolPreamble } from './tool-preamble.js';
import { boundedSchema } from './json-schema-bounds.js';
import { LlamaModelWorker } from './llama-model-worker.js';

/** How long a models-folder listing is reused. */
const RESCAN_MS = 1000;

export interface LlamaEngineOptions {
  /** How long a folder listing is reused by models(); default 1 s (0: every call reads the folder). */
  rescanMs?: number;
  /** Every *.gguf file here is a model, its id the file name without .gguf. */
  modelsDir: string;
  /** Parallel sequences per model: that many generations run at once. Default 6. */
  sequences?: number;
  /** Tokens per sequence; default the model's trained context length, capped at 4096. */
  contextSize?: number;
  /** CPU threads per model; default the cores but one (at least 1). */
  threads?: number;
  /** A model still loading after this long is failed. Default 5 minutes. */
  loadTimeoutMs?: number;
  /** Requests that may wait for a model whose sequences are all busy; more are refused. Default 64. */
  maxWaiting?: number;
}

const DEFAULT_CONTEXT_CAP = 4096;

// The spec's Service I extras that llama.cpp (through node-llama-cpp 3.22) has no sampler for.
const UNSUPPORTED: Partial<Record<SamplingParam, string>> = { topA: 'top_a', tfs: 'tfs', typicalP: 'typical_p', mirostat: 'mirostat' };

interface Entry {
  worker: LlamaModelWorker;
  /** Size and modification time: a replaced file is loaded afresh. */
  signature: string;
}

/**
 * The embedded llama.cpp text engine: each GGUF in the models folder runs in a worker process of
 * its own (a malformed file aborts only that process), with N parallel sequences as its capacity.
 * A request finding every sequence busy waits in arrival order (up to `maxWaiting` requests, then
 * 'unavailable'); its AbortSignal takes it out of the queue or stops its generation at once.
 */
export class LlamaEngine implements TextEngine {
  readonly kind = 'llama' as const;
  readonly unsupported: ReadonlySet<SamplingParam | 'guided_json' | 'guided_regex' | 'guided_choice'> = new Set(Object.keys(UNSUPPORTED) as SamplingParam[]);
  private readonly entries = new Map<string, Entry>();
  private scanning: Promise<void> | null = null;
  private scannedAt = Number.NEGATIVE_INFINITY;
  private closed = false;

  constructor(private readonly options: LlamaEngineOptions) {
    const sequences = options.sequences ?? 6;
    if (!Number.isInteger(sequences) || sequences < 1) throw new RangeError('sequences must be a positive integer');
  }

  /** Reads the folder: new files start loading, replaced ones reload, removed ones stop. */
  private scan(): Promise<void> {
    this.scanning ??= this.doScan().finally(() => {
      this.scanning = null;
      this.scannedAt = performance.now();
    });
    return this.scanning;
  }

  /**
   * The listing reads the folder at most once a second: every request resolves its model through
   * it, and a readdir plus a stat per file on each would cost more than the rest of the routing. A
   * file dropped in is still found at once by a request naming it (`worker` scans on a miss).
   */
  private scanRecent(): Promise<void> {
    if (this.scanning || performance.now() - this.scannedAt >= (this.options.rescanMs ?? RESCAN_MS)) return this.scan();
    return Promise.resolve();
  }

  private async doScan(): Promise<void> {
    if (this.closed) return;
    let names: string[];
    try {
      names = (await readdir(this.options.modelsDir)).filter((name) => name.toLowerCase().endsWith('.gguf'));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') names = [];
      else throw error;
    }
    const seen = new Set<string>();
    for (const name of names) {
      const id = name.slice(0, -'.gguf'.length);
      const path = join(this.options.modelsDir, name);
      let signature: string;
      try {
        const info = await stat(path);
        if (!info.isFile()) continue;
        signature = `${info.size}:${info.mtimeMs}`;
      } catch {
        continue;
      }
      seen.add(id);
      const entry = this.entries.get(id);
      if (entry?.signature === signature) continue;
      if (entry) await entry.worker.close();
      this.entries.set(id, { signature, worker: this.startWorker(id, path) });
    }
    for (const [id, entry] of this.entries) {
      if (seen.has(id)) continue;
      this.entries.delete(id);
      await entry.worker.close();
    }
  }

  private startWorker(id: string, modelPath: string): LlamaModelWorker {
    return new LlamaModelWorker({
      id,
      load: {
        modelPath,
        sequences: this.options.sequences ?? 6,
        contextSize: this.options.contextSize ?? DEFAULT_CONTEXT_CAP,
        threads: this.options.threads ?? Math.max(1, availableParallelism() - 1),
      },
      loadTimeoutMs: this.options.loadTimeoutMs ?? 5 * 60_000,
      maxWaiting: this.options.maxWaiting ?? 64,
    });
  }

  async models(): Promise<EngineModel[]> {
    await this.scanRecent();
    return [...this.entries.values()]
      .map(({ worker }): EngineModel => {
        const model: EngineModel = { id: worker.id, contextLength: worker.contextLength, inputModalities: ['text'], urlImageInput: false, status: worker.status, embeddings: true, tools: true };
        if (worker.error !== undefined) model.error = worker.error;
        return model;
      })
      .sort((a, b) => a.id.localeCompare(b.id));
  }

  /** Resolves when every model in the folder has loaded or failed. */
  async settled(): Promise<EngineModel[]> {
    await this.scan();
    await Promise.all([...this.entries.values()].map(({ worker }) => worker.settled()));
    return this.models();
  }

  /** Each model's sequences, how many are busy and how many requests wait for one. */
  async capacity(): Promise<{ model: string; sequences: number; busy: number; waiting: number }[]> {
    await this.scan();
    return [...this.entries.values()].map(({ worker }) => ({ model: worker.id, ...worker.load() }));
  }

  private async worker(model: string): Promise<LlamaModelWorker> {
    if (this.closed) throw new EngineError('unavailable', 'The llama engine is closed');
    // A file dropped in since the last scan is found without waiting for the next models() call.
    if (!this.entries.has(model)) await this.scan();
    const entry = this.entries.get(model);
    if (!entry) throw new EngineError('model_not_found', `Model ${model} is not in the llama models folder`);
    return entry.worker;
  }

  private grammar(request: GenerationRequest, param = 'guided_json'): WorkerGrammar | undefined {
    const guided = request.guided;
    if (!guided) return undefined;
    if (guided.kind === 'regex') return { kind: 'gbnf', gbnf: regexToGbnf(guided.pattern), param: 'guided_regex' };
    if (guided.kind === 'choice') return { kind: 'gbnf', gbnf: choiceToGbnf(guided.choices), param: 'guided_choice' };
    if (typeof guided.schema !== 'object' || guided.schema === null || Array.isArray(guided.schema)) {
      throw new EngineError('invalid_request', `${param} must be a JSON schema object`, param);
    }
    const { schema, rules } = boundedSchema(guided.schema);
    const unenforced = unenforceableKeyword(schema, '');
    if (unenforced) throw new EngineError('unsupported_parameter', `${param} uses "${unenforced.keyword}"${unenforced.at ? ` (at ${unenforced.at})` : ''}, which the llama engine cannot enforce`, param);
    return { kind: 'json', schema: schema as Record<string, unknown>, rules };
  }

  private checkSampling(request: GenerationRequest): void {
    const sampling = request.sampling;
    const vllmOwn = Object.keys(request.passthrough ?? {})[0];
    if (vllmOwn !== undefined) throw new EngineError('unsupported_parameter', `${vllmOwn} is not supported by the llama engine`, vllmOwn);
    for (const [name, wire] of Object.entries(UNSUPPORTED)) {
      if (sampling[name as SamplingParam] !== undefined) throw new EngineError('unsupported_parameter', `${wire} is not supported by the llama engine`, wire);
    }
    const { maxTokens, seed, topK, noRepeatNgramSize } = sampling;
    if (maxTokens !== undefined && (!Number.isInteger(maxTokens) || maxTokens < 0)) throw new EngineError('invalid_request', 'max_tokens must be a non-negative integer', 'max_tokens');
    if (seed !== undefined && (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff)) throw new EngineError('invalid_request', 'seed must be an integer from 0 to 4294967295', 'seed');
    if (topK !== undefined && (!Number.isInteger(topK) || topK < 0)) throw new EngineError('invalid_request', 'top_k must be a non-negative integer', 'top_k');
    if (noRepeatNgramSize !== undefined && (!Number.isInteger(noRepeatNgramSize) || noRepeatNgramSize < 0)) {
      throw new EngineError('invalid_request', 'no_repeat_ngram_size must be a non-negative integer', 'no_repeat_ngram_size');
    }
  }

  async *generate(request: GenerationRequest): AsyncIterable<GenerationEvent> {
    this.checkSampling(request);
    const call = callGrammar(request);
    // One grammar holds the answer: calls or guided output, not both (the guided form would be ignored).
    if (call && request.guided) throw new EngineError('unsupported_parameter', "Guided output with tools is not supported by the llama engine unless tool_choice is 'none'", 'tool_choice');
    let grammar = this.grammar(request);
    if (call) {
      const built = this.grammar({ ...request, guided: { kind: 'json', schema: call.schema } }, 'tools');
      grammar = built?.kind === 'json' ? { ...built, calls: { max: call.max, orText: call.orText } } : built;
    }
    const worker = await this.worker(request.model);
    const events = worker.generate(request.input, request.sampling, grammar, request.signal, request.onAccepted, shownTools(request.tools?.choice === 'none' ? undefined : request.tools?.definitions), request.logprobs);
    yield* call ? asToolCalls(events, call.orText) : events;
  }

  /** The prompt's tokens; with `tools`, as a generation offering them renders it. */
  async tokenize(model: string, input: GenerationInput, tools?: ToolDefinition[]): Promise<TokenizeResult> {
    const worker = await this.worker(model);
    const tokens = await worker.tokenize(input, shownTools(tools));
    return { count: tokens.length, maxModelLen: worker.contextLength, tokens };
  }

  /** Embeds with node-llama-cpp's embedding context in the model's worker; `dimensions` is refused (no truncation here). */
  async embed(request: EmbeddingRequest): Promise<EmbeddingResult> {
    if (request.dimensions !== undefined) throw new EngineError('unsupported_parameter', 'dimensions is not supported by the llama engine', 'dimensions');
    const worker = await this.worker(request.model);
    return worker.embed(request.inputs);
  }

  async health(): Promise<EngineHealth> {
    try {
      const models = await this.models();
      const failed = models.filter((model) => model.status === 'failed').map((model) => model.id);
      const ready = models.filter((model) => model.status === 'ready').length;
      return { ok: true, detail: `${ready} of ${models.length} models ready${failed.length ? `; failed: ${failed.join(', ')}` : ''}` };
    } catch (error) {
      return { ok: false, detail: `The models folder ${this.options.modelsDir} cannot be read: ${(error as Error).message}` };
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.scanning;
    await Promise.all([...this.entries.values()].map(({ worker }) => worker.close()));
    this.entries.clear();
  }
}

/** The tools the model is shown ('none' shows none: its answer is text). */
function shownTools(definitions: ToolDefinition[] | undefined): WorkerTools | undefined {
  return definitions && definitions.length > 0 ? { definitions, preamble: toolPreamble(definitions) } : undefined;
}

// Calls in one turn when parallel_tool_calls is true: a bound keeps a random or looping model's answer finite.
const MAX_PARALLEL_CALLS = 4;

/**
 * The grammar for a turn with tools, or none for 'none' (text). Each call is one object
 * {"name": <a tool's name>, "arguments": <that tool's parameters>}; 'required' and a named tool
 * answer calls only, 'auto' calls or text that cannot begin as a call does (so the first
 * character decides which); parallel_tool_calls allows up to MAX_PARALLEL_CALLS, one a line.
 */
function callGrammar(request: GenerationRequest): { schema: Record<string, unknown>; max: number; orText: boolean } | undefined {
  const tools = request.tools;
  if (!tools || tools.choice === 'none') return undefined;
  const choice = tools.choice;
  const chosen = typeof choice === 'object' ? tools.definitions.filter((tool) => tool.name === choice.name) : tools.definitions;
  if (chosen.length === 0) throw new EngineError('invalid_request', 'tool_choice names a function that is not in tools', 'tool_choice');
  const shapes = chosen.map((tool) => ({
    type: 'object',
    properties: { name: { const: tool.name }, arguments: tool.parameters ?? { type: 'object', properties: {} } },
    required: ['name', 'arguments'],
    additionalProperties: false,
  }));
  return { schema: shapes.length === 1 ? shapes[0] : { oneOf: shapes }, max: tools.parallel ? MAX_PARALLEL_CALLS : 1, orText: choice === 'auto' };
}

// A call's text up to its arguments; the grammar writes name before arguments, as the schema lists them.
const CALL_HEAD = /\s*\{\s*"name"\s*:\s*("(?:[^"\\]|\\.)*")\s*,\s*"arguments"\s*:\s*/uy;
const CALL_TAIL = /\s*\}/uy;

/** Where the JSON value starting at `start` ends (the index after it), or -1 while it is unfinished. */
function jsonValueEnd(text: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const char = text[i];
    if (inString) {
      if (char === '\\') i++;
      else if (char === '"') inString = false;
    } else if (char === '"') inString = true;
    else if (char === '{' || char === '[') depth++;
    else if (char === '}' || char === ']') {
      depth--;
      if (depth === 0) return i + 1;
    }
  }
  return -1;
}

interface CallState {
  id: string;
  sent: number;
}

/** The tool_call pieces `text` (the calls so far, one a line) adds to what `calls` records as sent. */
function* callPieces(text: string, calls: CallState[]): Generator<GenerationEvent> {
  let at = 0;
  for (let index = 0; ; index++) {
    CALL_HEAD.lastIndex = at;
    const head = CALL_HEAD.exec(text);
    if (!head) return;
    let call = calls[index];
    if (!call) {
      call = calls[index] = { id: `call_${randomBytes(12).toString('hex')}`, sent: 0 };
      yield { type: 'tool_call', index, id: call.id, name: JSON.parse(head[1]) as string, arguments: '' };
    }
    const start = at + head[0].length;
    const end = jsonValueEnd(text, start);
    const args = text.slice(start, end === -1 ? text.length : end);
    if (args.length > call.sent) yield { type: 'tool_call', index, arguments: args.slice(call.sent) };
    call.sent = Math.max(call.sent, args.length);
    if (end === -1) return;
    CALL_TAIL.lastIndex = end;
    if (!CALL_TAIL.exec(text)) return;
    at = CALL_TAIL.lastIndex;
  }
}

/**
 * The answer read back while it is written: calls become tool_call pieces (each call's id and name
 * once its head is complete, then its arguments' text), text (only 'auto' allows it) stays deltas.
 */
async function* asToolCalls(events: AsyncIterable<GenerationEvent>, orText: boolean): AsyncGenerator<GenerationEvent> {
  let text = '';
  let mode: 'calls' | 'text' | undefined = orText ? undefined : 'calls';
  const calls: CallState[] = [];
  for await (const event of events) {
    if (event.type === 'delta') {
      if (mode === 'text') {
        yield event;
        continue;
      }
      text += event.text;
      if (mode === undefined) {
        const first = text.trimStart()[0];
        if (first === undefined) continue;
        mode = first === '{' ? 'calls' : 'text';
        if (mode === 'text') {
          yield { ...event, text };
          continue;
        }
      }
      yield* callPieces(text, calls);
    } else if (event.type === 'done') {
      if (mode === undefined && text !== '') yield { type: 'delta', text };
      // A call cut by max_tokens stays 'length'.
      yield { ...event, finishReason: event.finishReason === 'stop' && calls.length > 0 ? 'tool_calls' : event.finishReason };
    } else yield event;
  }
}

// What node-llama-cpp's JSON-schema grammar enforces (its GbnfJsonSchema types); it drops any other
// keyword without a word (minimum, pattern, anyOf…), so that the answer would not validate.
const ENFORCED_KEYWORDS = new Set([
  'type', 'const', 'enum', 'oneOf', '$defs', '$ref', 'minLength', 'maxLength', 'format',
  'properties', 'additionalProperties', 'minProperties', 'maxProperties', 'required',
  'items', 'prefixItems', 'minItems', 'maxItems',
  // Annotations, which constrain nothing.
  'description', 'title', '$schema', '$id', '$comment', 'default', 'examples', 'deprecated', 'readOnly', 'writeOnly',
]);
const ENFORCED_FORMATS = new Set(['date-time', 'time', 'date']);

/** The first keyword of a JSON schema the llama engine's grammar would ignore, with its JSON pointer. */
function unenforceableKeyword(schema: unknown, at: string): { keyword: string; at: string } | undefined {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return undefined;
  const record = schema as Record<string, unknown>;
  for (const [keyword, value] of Object.entries(record)) {
    if (!ENFORCED_KEYWORDS.has(keyword) || (keyword === 'format' && !ENFORCED_FORMATS.has(value as string))) return { keyword, at };
    const children: [string, unknown][] =
      keyword === 'properties' || keyword === '$defs'
        ? Object.entries((value ?? {}) as Record<string, unknown>).map(([name, child]) => [`${at}/${keyword}/${name}`, child])
        : keyword === 'oneOf' || keyword === 'prefixItems'
          ? (Array.isArray(value) ? value : []).map((child, i) => [`${at}/${keyword}/${i}`, child])
          : keyword === 'items' || keyword === 'additionalProperties'
            ? [[`${at}/${keyword}`, value]]
            : [];
    for (const [path, child] of children) {
      const found = unenforceableKeyword(child, path);
      if (found) return found;
    }
  }
  return undefined;
}
