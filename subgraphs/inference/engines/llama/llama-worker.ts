/**
 * The llama engine's worker: one process per model file, forked by LlamaEngine. llama.cpp aborts
 * the process that loads a malformed GGUF (GGML_ASSERT), so nothing else may live here. It runs
 * under Node's own type stripping (no loader), hence erasable syntax and type-only local imports.
 */
import { getLlama, JinjaTemplateChatWrapper, LlamaGrammar, LlamaGrammarEvaluationState, LlamaLogLevel, TokenBias } from 'node-llama-cpp';
import type { ChatHistoryItem, ChatWrapper, Llama, LlamaContext, LlamaContextSequence, LlamaEmbeddingContext, LlamaModel, SequenceEvaluateOptions, Token } from 'node-llama-cpp';
import { randomInt } from 'node:crypto';
import type { ChatMessage, GenerationInput, SamplingParams, TokenLogprob } from '../../engine/text-engine.js';
import type { FromWorker, ToWorker, WorkerGrammar, WorkerLoadOptions, WorkerTools } from './llama-protocol.js';

// llama.cpp's default window for the repetition penalties (penalty_last_n).
const PENALTY_LAST_N = 64;
// DRY looks this far back; node-llama-cpp's "whole context" (-1) reaches the prebuilt sampler as no window at all.
const DRY_LAST_N = 1024;

interface Loaded {
  llama: Llama;
  model: LlamaModel;
  context: LlamaContext;
  sequences: LlamaContextSequence[];
  chatWrapper: ChatWrapper | null;
  utf8?: Utf8Vocabulary;
}

/** A refusal the parent passes on as an EngineError (anything else thrown is an engine failure). */
interface Refusal extends Error {
  refusal: { reason: 'invalid_request' | 'unsupported_parameter'; param?: string };
}

function refusal(reason: 'invalid_request' | 'unsupported_parameter', message: string, param?: string): Refusal {
  return Object.assign(new Error(message), { refusal: { reason, param } });
}

function isRefusal(error: unknown): error is Refusal {
  return error instanceof Error && 'refusal' in error;
}

let loaded: Loaded | null = null;
const running = new Map<number, AbortController>();

function send(message: FromWorker): void {
  process.send?.(message);
}

async function load(options: WorkerLoadOptions): Promise<void> {
  // build 'never' + skipDownload: the prebuilt CPU binary or nothing; no compile, no network.
  const llama = await getLlama({ gpu: false, build: 'never', skipDownload: true, usePrebuiltBinaries: true, progressLogs: false, maxThreads: options.threads, logLevel: LlamaLogLevel.error });
  const model = await llama.loadModel({ modelPath: options.modelPath });
  const contextSize = Math.min(options.contextSize ?? model.trainContextSize, model.trainContextSize);
  const context = await model.createContext({ sequences: options.sequences, contextSize, threads: options.threads });
  const sequences = Array.from({ length: options.sequences }, () => context.getSequence());
  const template = model.fileInfo.metadata.tokenizer?.chat_template;
  const chatWrapper = typeof template === 'string' && template !== '' ? new JinjaTemplateChatWrapper({ template, tokenizer: model.tokenizer }) : null;
  loaded = { llama, model, context, sequences, chatWrapper };
  send({ type: 'ready', contextLength: sequences[0].contextSize });
}

function text(message: ChatMessage): string {
  if (message.content === null) return '';
  if (typeof message.content === 'string') return message.content;
  if (message.content.some((part) => part.type !== 'text')) throw refusal('invalid_request', 'This model takes text only; the message has an image part', 'messages');
  return message.content.map((part) => (part.type === 'text' ? part.text : '')).join('');
}

/** An assistant turn's calls as the JSON the call grammar makes the model write, one a line. */
function renderedCalls(message: ChatMessage): string {
  const calls = (message.toolCalls ?? []).map((call) => `{"name":${JSON.stringify(call.name)},"arguments":${call.arguments}}`);
  return calls.length === 0 ? '' : `${message.content ? '\n' : ''}${calls.join('\n')}`;
}

/** The prompt's tokens (the model's own chat template applied for chat) and, for chat, the template's stop triggers as token runs. */
function promptTokens(state: Loaded, input: GenerationInput, tools?: WorkerTools): { tokens: Token[]; triggers: Token[][] } {
  const { model } = state;
  let tokens: Token[];
  let triggers: Token[][] = [];
  if (input.kind === 'chat') {
    if (!state.chatWrapper) throw refusal('invalid_request', 'This model has no chat template in its GGUF metadata; use completions', 'messages');
    const chatHistory: ChatHistoryItem[] = input.messages.map((message): ChatHistoryItem => {
      const content = text(message);
      if (message.role === 'system') return { type: 'system', text: content };
      if (message.role === 'user') return { type: 'user', text: content };
      // A tool's result reaches the model as a user turn naming the call it answers.
      if (message.role === 'tool') return { type: 'user', text: `Result of tool call ${message.toolCallId ?? ''}: ${content}` };
      return { type: 'model', response: [content + renderedCalls(message)] };
    });
    chatHistory.push({ type: 'model', response: [] });
    // The template's own tools rendering where it has one; else the parent's preamble, merged into the system turn.
    const withTemplate = tools !== undefined && state.chatWrapper instanceof JinjaTemplateChatWrapper && state.chatWrapper.usingJinjaFunctionCallTemplate;
    if (tools && !withTemplate) {
      const first = chatHistory[0];
      if (first?.type === 'system') chatHistory[0] = { type: 'system', text: `${tools.preamble}\n\n${first.text}` };
      else chatHistory.unshift({ type: 'system', text: tools.preamble });
    }
    const availableFunctions = withTemplate ? Object.fromEntries(tools.definitions.map((tool) => [tool.name, { description: tool.description, params: tool.parameters as never }])) : undefined;
    const rendered = state.chatWrapper.generateContextState({ chatHistory, availableFunctions });
    tokens = rendered.contextText.tokenize(model.tokenizer);
    triggers = rendered.stopGenerationTriggers.map((trigger) => trigger.tokenize(model.tokenizer, 'trimLeadingSpace')).filter((run) => run.length > 0);
  } else {
    tokens = model.tokenize(input.prompt, false);
  }
  const bos = model.tokens.bos;
  if (model.tokens.shouldPrependBosToken && bos != null && tokens[0] !== bos) tokens = [bos, ...tokens];
  return { tokens, triggers };
}

// A \u escape of a UTF-16 surrogate (D800–DFFF) would write half a character.
const NON_SURROGATE_ESCAPE = '"\\\\u" ([0-9a-cA-CefEF] [0-9a-fA-F]{3} | [dD] [0-7] [0-9a-fA-F]{2})';

/**
 * node-llama-cpp's JSON grammar, tightened for a client that parses the answer: its integers take
 * exponents (860e515 is Infinity to JSON.parse, no integer), its exponents run to 16 digits, its
 * \u escapes take surrogate halves, and it ends every document with four newlines for its own chat
 * session's stop trigger. A string with a length bound keeps to the BMP: its length is then the
 * same in code points (JSON schema, ajv) and in UTF-16 units (JavaScript's .length, zod's .max()).
 */
function jsonGrammarForClients(gbnf: string): string {
  const exponent = ' ([eE] [-+]? ("0" | [1-9] [0-9]{0,15}))?';
  return gbnf
    .split('\n')
    .map((line) => {
      if (line.startsWith('integer-number-rule ::=')) return line.replace(exponent, '');
      if (line.startsWith('fractional-number-rule ::=')) return line.replace(exponent, ' ([eE] [-+]? [0-9]{1,2})?');
      if (line.startsWith('root ::=')) return line.replace(/ "\\n\\n\\n\\n" \[\\n\]\*$/, '');
      if (line.startsWith('string-char-rule ::=')) {
        const char = line.replace('"\\\\u" [0-9a-fA-F]{4}', NON_SURROGATE_ESCAPE);
        return `${char}\n${char.replace('string-char-rule', 'string-bmp-char-rule').replace('\\x00-\\x1F]', '\\x00-\\x1F\\U00010000-\\U0010FFFF]')}`;
      }
      if (/^string-\d+(?:-\d+)?-rule ::=/.test(line)) return line.replaceAll('string-char-rule', 'string-bmp-char-rule');
      return line;
    })
    .join('\n');
}

/**
 * node-llama-cpp's grammar with each placeholder const's literal ("\"guided-…\"", as it writes a
 * const string) replaced by the rule that stands for it. A placeholder left in any other form
 * fails the generation (an engine failure, not the client's): its text must never be the answer.
 */
function spliceRules(gbnf: string, rules: { placeholder: string; gbnf: string }[]): string {
  let out = gbnf;
  for (const rule of rules) out = out.replaceAll(`"\\"${rule.placeholder}\\""`, `(${rule.gbnf})`);
  const left = rules.find((rule) => out.includes(rule.placeholder));
  if (left) throw new Error(`node-llama-cpp wrote the guided_json placeholder ${left.placeholder} in a form this engine does not replace`);
  return out;
}

/**
 * One call's grammar made the answer of a turn with tools: up to `max` calls, one a line, or with
 * `orText` free text whose first character is not "{" nor white space, so it is told from a call at once.
 */
function callsGrammar(call: string, { max, orText }: { max: number; orText: boolean }): string {
  const calls = max > 1 ? `tool-call ("\\n" tool-call){0,${max - 1}}` : 'tool-call';
  const root = orText ? `root ::= ${calls} | answer-text\nanswer-text ::= ([^{ \\t\\r\\n] [^\\x00]*)?` : `root ::= ${calls}`;
  return `${call.replace(/^root ::=/m, 'tool-call ::=')}\n${root}`;
}

async function grammarState(state: Loaded, grammar: WorkerGrammar): Promise<LlamaGrammarEvaluationState> {
  let built: LlamaGrammar;
  if (grammar.kind === 'json') {
    let gbnf: string;
    try {
      gbnf = (await state.llama.createGrammarForJsonSchema(grammar.schema as never)).grammar;
    } catch (error) {
      throw refusal('invalid_request', `guided_json is not a JSON schema this engine can enforce: ${(error as Error).message}`, 'guided_json');
    }
    const spliced = spliceRules(jsonGrammarForClients(gbnf), grammar.rules);
    try {
      built = new LlamaGrammar(state.llama, { grammar: grammar.calls ? callsGrammar(spliced, grammar.calls) : spliced });
    } catch (error) {
      throw refusal('invalid_request', `guided_json makes a grammar llama.cpp refuses (${(error as Error).message})`, 'guided_json');
    }
  } else {
    try {
      built = new LlamaGrammar(state.llama, { grammar: grammar.gbnf });
    } catch (error) {
      // llama.cpp caps repetitions (nested {m,n} multiply) and refuses what it cannot build.
      throw refusal('invalid_request', `${grammar.param} makes a grammar llama.cpp refuses (${(error as Error).message}); use fewer or smaller repetitions`, grammar.param);
    }
  }
  return new LlamaGrammarEvaluationState({ model: state.model, grammar: built });
}

/**
 * The vocabulary as UTF-8: tokens whose text is whole characters, and the bytes of the others
 * (byte pieces, partial characters), which a grammar must not be left to judge: llama.cpp's
 * grammar decodes an invalid sequence (0xF8 leads, overlongs) as one code point and counts it.
 */
interface Utf8Vocabulary {
  /** Tokens that are whole, valid characters (or no text at all, as control tokens). */
  whole: Set<Token>;
  /** The other tokens with their bytes; null where the bytes cannot be known. */
  fragments: Map<Token, Uint8Array | null>;
  /** Banned at every step: fragments that cannot follow a complete character, and control tokens but the end's. */
  banned: Token[];
}

/** Where a UTF-8 decoder stands: continuation bytes still needed and the range the next one must fall in. */
interface Utf8State {
  need: number;
  low: number;
  high: number;
}

const UTF8_START: Utf8State = { need: 0, low: 0x80, high: 0xbf };

/** The decoder's state after one byte, or null where the byte makes the text invalid UTF-8 (RFC 3629's table). */
function utf8Step(state: Utf8State, byte: number): Utf8State | null {
  if (state.need > 0) return byte >= state.low && byte <= state.high ? { need: state.need - 1, low: 0x80, high: 0xbf } : null;
  if (byte < 0x80) return UTF8_START;
  if (byte >= 0xc2 && byte <= 0xdf) return { need: 1, low: 0x80, high: 0xbf };
  if (byte === 0xe0) return { need: 2, low: 0xa0, high: 0xbf };
  if (byte === 0xed) return { need: 2, low: 0x80, high: 0x9f };
  if (byte >= 0xe1 && byte <= 0xef) return { need: 2, low: 0x80, high: 0xbf };
  if (byte === 0xf0) return { need: 3, low: 0x90, high: 0xbf };
  if (byte >= 0xf1 && byte <= 0xf3) return { need: 3, low: 0x80, high: 0xbf };
  if (byte === 0xf4) return { need: 3, low: 0x80, high: 0x8f };
  return null;
}

function utf8After(state: Utf8State, bytes: Uint8Array): Utf8State | null {
  let at: Utf8State | null = state;
  for (const byte of bytes) {
    at = utf8Step(at, byte);
    if (!at) return null;
  }
  return at;
}

// GPT-2's byte-level BPE writes each byte as a printable character; this undoes that table.
function gpt2ByteDecoder(): Map<string, number> {
  const printable = (byte: number) => (byte >= 0x21 && byte <= 0x7e) || (byte >= 0xa1 && byte <= 0xac) || (byte >= 0xae && byte <= 0xff);
  const decoder = new Map<string, number>();
  let extra = 0;
  for (let byte = 0; byte < 256; byte++) decoder.set(String.fromCodePoint(printable(byte) ? byte : 256 + extra++), byte);
  return decoder;
}

function utf8Vocabulary(model: LlamaModel): Utf8Vocabulary {
  const ggml = (model.fileInfo.metadata.tokenizer as unknown as { ggml?: { model?: string; tokens?: string[] } } | undefined)?.ggml;
  const pieces = ggml?.tokens ?? [];
  const bpe = ggml?.model === 'gpt2' ? gpt2ByteDecoder() : null;
  const whole = new Set<Token>();
  const fragments = new Map<Token, Uint8Array | null>();
  // A control token reaches llama.cpp's grammar as its literal text (<s> fits a string), yet the answer drops it.
  const silent: Token[] = [];
  for (let id = 0; id < pieces.length; id++) {
    const token = id as Token;
    const text = model.detokenize([token]);
    const attributes = model.getTokenAttributes(token);
    if (!model.isEogToken(token) && (attributes.control || attributes.unknown || attributes.unused || attributes.undefined)) silent.push(token);
    if (!text.includes('\uFFFD')) {
      whole.add(token);
      continue;
    }
    const piece = pieces[id];
    const byte = /^<0x([0-9A-Fa-f]{2})>$/.exec(piece);
    let bytes: Uint8Array | null = null;
    if (byte) bytes = Uint8Array.of(parseInt(byte[1], 16));
    else if (bpe && [...piece].every((char) => bpe.has(char))) bytes = Uint8Array.from([...piece], (char) => bpe.get(char)!);
    fragments.set(token, bytes);
  }
  const invalidAtStart = [...fragments].filter(([, bytes]) => !bytes || !utf8After(UTF8_START, bytes)).map(([token]) => token);
  return { whole, fragments, banned: [...silent, ...invalidAtStart] };
}

/**
 * A token bias that keeps the answer valid UTF-8 token by token: after a complete character only
 * tokens that begin validly, inside one only the bytes that continue it. `history` grows by each
 * sampled token from `from` on; the bias is asked before each sample.
 */
function utf8Bias(state: Loaded, history: Token[], from: number): (bias: TokenBias) => void {
  const vocabulary = (state.utf8 ??= utf8Vocabulary(state.model));
  let at: Utf8State = UTF8_START;
  let seen = from;
  return (bias) => {
    for (; seen < history.length; seen++) {
      const token = history[seen];
      const bytes = vocabulary.fragments.get(token);
      // A whole token after a complete character leaves one; a fragment moves the decoder on.
      at = bytes ? (utf8After(at, bytes) ?? UTF8_START) : UTF8_START;
    }
    if (at.need === 0) {
      for (const token of vocabulary.banned) bias.set(token, 'never');
      return;
    }
    for (const token of vocabulary.whole) bias.set(token, 'never');
    for (const [token, bytes] of vocabulary.fragments) if (!bytes || !utf8After(at, bytes)) bias.set(token, 'never');
  };
}

/** Bans every token that would complete an n-gram already present (Hugging Face's no_repeat_ngram_size). */
function noRepeatNgramBias(history: Token[], size: number): (bias: TokenBias) => void {
  return (bias) => {
    if (history.length < size - 1) return;
    const tail = history.slice(history.length - (size - 1));
    for (let start = 0; start + size <= history.length; start++) {
      let same = true;
      for (let i = 0; i < size - 1 && same; i++) same = history[start + i] === tail[i];
      if (same) bias.set(history[start + size - 1], 'never');
    }
  };
}

function samplingOptions(state: Loaded, sampling: SamplingParams, history: Token[], guided: boolean): SequenceEvaluateOptions {
  // The spec's defaults (temperature 1, top_p 1, no top-k), not node-llama-cpp's (greedy, 0.95, 40).
  const options: SequenceEvaluateOptions = {
    temperature: sampling.temperature ?? 1,
    topP: sampling.topP ?? 1,
    topK: sampling.topK ?? 0,
    minP: sampling.minP ?? 0,
    seed: sampling.seed ?? randomInt(2 ** 31),
    yieldEogToken: true,
  };
  if (sampling.repetitionPenalty !== undefined || sampling.presencePenalty !== undefined || sampling.frequencyPenalty !== undefined) {
    options.repeatPenalty = {
      punishTokens: () => history.slice(-PENALTY_LAST_N),
      maxPunishTokens: PENALTY_LAST_N,
      penalty: sampling.repetitionPenalty ?? 1,
      presencePenalty: sampling.presencePenalty ?? 0,
      frequencyPenalty: sampling.frequencyPenalty ?? 0,
    };
  }
  if (sampling.dryMultiplier !== undefined && sampling.dryMultiplier > 0) {
    options.dryRepeatPenalty = { strength: sampling.dryMultiplier, base: sampling.dryBase, allowedLength: sampling.dryAllowedLength, lastTokens: DRY_LAST_N };
  }
  const biases: ((bias: TokenBias) => void)[] = [];
  if (sampling.noRepeatNgramSize !== undefined && sampling.noRepeatNgramSize > 0) biases.push(noRepeatNgramBias(history, sampling.noRepeatNgramSize));
  if (guided) biases.push(utf8Bias(state, history, history.length));
  if (biases.length > 0) {
    options.tokenBias = () => {
      const bias = new TokenBias(state.model.tokenizer);
      for (const add of biases) add(bias);
      return bias;
    };
  }
  return options;
}

/** Length of the longest end of `text` that begins one of the stop strings (held back until it is decided). */
function heldBack(text: string, stops: string[]): number {
  let longest = 0;
  for (const stop of stops) {
    for (let length = Math.min(stop.length - 1, text.length); length > longest; length--) {
      if (text.endsWith(stop.slice(0, length))) {
        longest = length;
        break;
      }
    }
  }
  return longest;
}

function endsWithRun(tokens: Token[], run: Token[]): boolean {
  if (tokens.length < run.length) return false;
  return run.every((token, i) => tokens[tokens.length - run.length + i] === token);
}

function startsRun(tokens: Token[], triggers: Token[][]): boolean {
  return triggers.some((run) => {
    for (let length = Math.min(run.length - 1, tokens.length); length > 0; length--) if (endsWithRun(tokens, run.slice(0, length))) return true;
    return false;
  });
}

async function generate(message: Extract<ToWorker, { type: 'generate' }>): Promise<void> {
  const state = loaded;
  const controller = new AbortController();
  running.set(message.id, controller);
  const sequence = state?.sequences[message.slot];
  try {
    if (!state || !sequence) throw new Error('The model is not loaded');
    const { tokens: prompt, triggers } = promptTokens(state, message.input, message.tools);
    const contextSize = sequence.contextSize;
    const param = message.input.kind === 'chat' ? 'messages' : 'prompt';
    if (prompt.length >= contextSize) throw refusal('invalid_request', `The prompt is ${prompt.length} tokens; this model's context holds ${contextSize}`, param);
    const maxTokens = message.sampling.maxTokens ?? contextSize - prompt.length;
    if (prompt.length + maxTokens > contextSize) {
      throw refusal('invalid_request', `max_tokens ${maxTokens} plus the prompt's ${prompt.length} tokens exceed this model's context of ${contextSize}`, 'max_tokens');
    }
    const stops = (message.sampling.stop ?? []).filter((stop) => stop !== '');
    const grammar = message.grammar ? await grammarState(state, message.grammar) : undefined;
    const history = [...prompt];
    // Only a grammar-guided answer is kept to valid UTF-8 here: a grammar counts characters, so a broken one would pass its limits.
    const options = samplingOptions(state, message.sampling, history, grammar !== undefined);
    if (grammar) options.grammarEvaluationState = grammar;
    send({ type: 'accepted', id: message.id });

    // A sequence is cleared after each generation; clear here only one a crash or refusal left dirty.
    // Erasing takes node-llama-cpp's context lock, which its batch dispatcher keeps while two or
    // more sequences generate, so an unneeded clear would hold this request until they finish.
    if (sequence.nextTokenIndex > 0) await sequence.clearHistory();
    // With the prompt's last tokens as context, a leading space of the answer is kept (SentencePiece drops it at a text's start).
    const context = prompt.slice(-8);
    const decode = (tokens: Token[]) => state.model.detokenize(tokens, false, context);
    const generated: Token[] = [];
    let sampled = 0;
    let emitted = 0;
    let finishReason: 'stop' | 'length' | null = null;
    let finalText: string | null = null;
    // Sampled tokens' log probabilities not yet sent; each delta carries those sampled since the last.
    let pendingLogprobs: TokenLogprob[] = [];
    const emit = (upTo: number, full: string, last = false) => {
      if (upTo > emitted || (last && pendingLogprobs.length > 0)) {
        const logprobs = message.logprobs ? { logprobs: pendingLogprobs } : {};
        send({ type: 'delta', id: message.id, text: full.slice(emitted, Math.max(upTo, emitted)), ...logprobs });
        pendingLogprobs = [];
      }
      emitted = Math.max(emitted, upTo);
    };
    const sampledTokens = message.logprobs
      ? sequence.evaluateWithMetadata(prompt, { probabilities: true }, options)
      : withoutMetadata(sequence.evaluate(prompt, options));

    if (maxTokens === 0) finishReason = 'length';
    else {
      for await (const { token, probabilities } of sampledTokens) {
        if (controller.signal.aborted) break;
        sampled++;
        history.push(token);
        if (state.model.isEogToken(token)) {
          finishReason = 'stop';
          break;
        }
        generated.push(token);
        if (message.logprobs && probabilities) pendingLogprobs.push(tokenLogprob(state, token, probabilities, message.logprobs.top, history.slice(-9, -1)));
        const full = decode(generated);
        const triggered = triggers.find((run) => endsWithRun(generated, run));
        if (triggered) {
          // The trigger's tokens end the turn; they are not the answer's.
          pendingLogprobs = pendingLogprobs.slice(0, Math.max(0, pendingLogprobs.length - triggered.length));
          finalText = decode(generated.slice(0, generated.length - triggered.length));
          finishReason = 'stop';
          break;
        }
        let stopAt = -1;
        for (const stop of stops) {
          const at = full.indexOf(stop, emitted);
          if (at !== -1 && (stopAt === -1 || at < stopAt)) stopAt = at;
        }
        if (stopAt !== -1) {
          finalText = full.slice(0, stopAt);
          finishReason = 'stop';
          break;
        }
        if (sampled >= maxTokens) {
          finishReason = 'length';
          break;
        }
        // Hold back an unfinished UTF-8 character, a possible stop string's start and a possible trigger.
        if (!startsRun(generated, triggers)) {
          const safe = full.replace(/\uFFFD+$/u, '');
          emit(safe.length - heldBack(safe, stops), full);
        }
      }
    }
    if (controller.signal.aborted) {
      send({ type: 'aborted', id: message.id });
      await clearAfter(sequence);
      return;
    }
    const full = finalText ?? decode(generated);
    emit(full.length, full, true);
    // The answer goes first: the clear may wait for the context lock (see above), and the slot's
    // next generation, if it comes sooner, waits for this clear in the lock's queue, not on a dirty sequence.
    send({ type: 'done', id: message.id, finishReason: finishReason ?? 'stop', usage: { promptTokens: prompt.length, completionTokens: sampled }, tokenIds: history.slice(prompt.length) });
    await clearAfter(sequence);
  } catch (error) {
    if (sequence && !sequence.disposed) await sequence.clearHistory().catch(() => undefined);
    if (isRefusal(error)) send({ type: 'failed', id: message.id, reason: error.refusal.reason, message: error.message, param: error.refusal.param });
    else send({ type: 'failed', id: message.id, reason: 'unavailable', message: `The llama engine failed: ${(error as Error).message}` });
  } finally {
    running.delete(message.id);
  }
}

async function* withoutMetadata(tokens: AsyncIterable<Token>): AsyncGenerator<{ token: Token; probabilities?: Map<Token, number> }> {
  for await (const token of tokens) yield { token };
}

// vLLM's floor for a probability of 0, whose log JSON cannot carry.
const LOGPROB_FLOOR = -9999;

function logOf(probability: number): number {
  return probability > 0 ? Math.max(Math.log(probability), LOGPROB_FLOOR) : LOGPROB_FLOOR;
}

/**
 * A token's text and UTF-8 bytes (a byte piece's own byte, not the replacement character its text
 * decodes to); `context`, the tokens before it, keeps a leading space SentencePiece drops at a text's
 * start. A control token sampled is no text of the answer; as an alternative it is shown by name.
 */
function tokenText(state: Loaded, token: Token, context: Token[], special: boolean): { token: string; bytes: number[] } {
  const text = state.model.detokenize([token], special, context);
  const fragment = (state.utf8 ??= utf8Vocabulary(state.model)).fragments.get(token);
  return { token: text, bytes: fragment ? [...fragment] : [...Buffer.from(text, 'utf8')] };
}

/**
 * The sampled token's log probability and the `top` likeliest alternatives, from node-llama-cpp's
 * probabilities of the next token (after the grammar and the sampling settings; the map is sorted, likeliest first).
 */
function tokenLogprob(state: Loaded, token: Token, probabilities: Map<Token, number>, top: number, context: Token[]): TokenLogprob {
  const alternatives: TokenLogprob['top'] = [];
  for (const [candidate, probability] of probabilities) {
    if (alternatives.length >= top) break;
    alternatives.push({ ...tokenText(state, candidate, context, true), logprob: logOf(probability) });
  }
  return { ...tokenText(state, token, context, false), logprob: logOf(probabilities.get(token) ?? 0), top: alternatives };
}

/** Erases a finished generation's tokens from its sequence; a failure only leaves it to the next start's clear. */
async function clearAfter(sequence: { disposed: boolean; clearHistory(): Promise<void> }): Promise<void> {
  if (!sequence.disposed) await sequence.clearHistory().catch(() => undefined);
}

function tokenize(message: Extract<ToWorker, { type: 'tokenize' }>): void {
  try {
    if (!loaded) throw new Error('The model is not loaded');
    send({ type: 'tokens', id: message.id, tokens: promptTokens(loaded, message.input, message.tools).tokens });
  } catch (error) {
    if (isRefusal(error)) send({ type: 'failed', id: message.id, reason: error.refusal.reason, message: error.message, param: error.refusal.param });
    else send({ type: 'failed', id: message.id, reason: 'unavailable', message: `The llama engine failed: ${(error as Error).message}` });
  }
}

/**
 * The embedding context is made on the first embed call and kept: one sequence of its own, so
 * embeddings never take a generation sequence; calls queue on it one after another.
 */
let embedding: Promise<LlamaEmbeddingContext> | null = null;
let embedQueue: Promise<unknown> = Promise.resolve();

function embed(message: Extract<ToWorker, { type: 'embed' }>): void {
  const run = async () => {
    if (!loaded) throw new Error('The model is not loaded');
    const state = loaded;
    embedding ??= state.model.createEmbeddingContext({ contextSize: state.sequences[0].contextSize });
    const context = await embedding;
    const vectors: number[][] = [];
    let promptTokens = 0;
    for (const [i, input] of message.inputs.entries()) {
      const tokens = typeof input === 'string' ? state.model.tokenize(input) : (input as Token[]);
      const limit = state.sequences[0].contextSize;
      if (tokens.length > limit) throw refusal('invalid_request', `input[${i}] has ${tokens.length} tokens, more than the model's ${limit}`, 'input');
      promptTokens += tokens.length;
      vectors.push([...(await context.getEmbeddingFor(tokens)).vector]);
    }
    send({ type: 'embeddings', id: message.id, vectors, promptTokens });
  };
  embedQueue = embedQueue.then(run).catch((error: unknown) => {
    if (isRefusal(error)) send({ type: 'failed', id: message.id, reason: error.refusal.reason, message: error.message, param: error.refusal.param });
    else send({ type: 'failed', id: message.id, reason: 'unavailable', message: `The llama engine failed: ${(error as Error).message}` });
  });
}

process.on('message', (message: ToWorker) => {
  if (message.type === 'load') {
    load(message.options).catch((error: unknown) => {
      send({ type: 'load_failed', error: (error as Error).message });
    });
  } else if (message.type === 'generate') void generate(message);
  else if (message.type === 'abort') running.get(message.id)?.abort();
  else if (message.type === 'tokenize') tokenize(message);
  else if (message.type === 'embed') embed(message);
});
// The parent gone means nobody reads our answers: leave rather than linger as an orphan.
process.on('disconnect', () => process.exit(0));
