/**
 * The contract between the inference interfaces (Service T, Service I text, the proxy, the
 * gateway, GraphQL) and the engines behind providers: an OpenAI-compatible upstream, the embedded
 * llama.cpp, the embedded OCR model. Interfaces validate the wire format and map errors to their
 * own statuses; engines only generate, tokenize and list, and never invent an answer: what they
 * cannot do they refuse with an EngineError.
 */

export type ChatRole = 'system' | 'user' | 'assistant';

export type ContentPart = { type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } };

export interface ChatMessage {
  role: ChatRole;
  content: string | ContentPart[];
}

/** Sampling parameters, by their engine-neutral names; absent means the engine's default. */
export interface SamplingParams {
  temperature?: number;
  topP?: number;
  topK?: number;
  minP?: number;
  maxTokens?: number;
  stop?: string[];
  seed?: number;
  presencePenalty?: number;
  frequencyPenalty?: number;
  repetitionPenalty?: number;
  // Service I's extras.
  topA?: number;
  tfs?: number;
  typicalP?: number;
  noRepeatNgramSize?: number;
  dryMultiplier?: number;
  dryBase?: number;
  dryAllowedLength?: number;
  mirostat?: number;
}

export type SamplingParam = keyof SamplingParams;

/** Every sampling parameter, for engines that list what they refuse by what they honour. */
export const SAMPLING_PARAMS: readonly SamplingParam[] = [
  'temperature',
  'topP',
  'topK',
  'minP',
  'maxTokens',
  'stop',
  'seed',
  'presencePenalty',
  'frequencyPenalty',
  'repetitionPenalty',
  'topA',
  'tfs',
  'typicalP',
  'noRepeatNgramSize',
  'dryMultiplier',
  'dryBase',
  'dryAllowedLength',
  'mirostat',
];

export type GuidedParam = 'guided_json' | 'guided_regex' | 'guided_choice';

export const GUIDED_PARAMS: readonly GuidedParam[] = ['guided_json', 'guided_regex', 'guided_choice'];

/** Guided output: the spec's guided_json, guided_regex and guided_choice. */
export type Guided = { kind: 'json'; schema: Record<string, unknown> } | { kind: 'regex'; pattern: string } | { kind: 'choice'; choices: string[] };

export type GenerationInput = { kind: 'chat'; messages: ChatMessage[] } | { kind: 'completion'; prompt: string };

export interface GenerationRequest {
  /** The engine's own model id (the provider layer has already resolved aliases and plans). */
  model: string;
  input: GenerationInput;
  sampling: SamplingParams;
  guided?: Guided;
  /** Aborted when the client goes away or the interface's timeout passes: the engine stops at once. */
  signal: AbortSignal;
  /**
   * Called by an engine that can tell when it has accepted the request, before its first token
   * (an upstream answered 200 with its stream), so that a streamed answer starts at once. What
   * the engine refuses is refused before it.
   */
  onAccepted?: () => void;
}

export type FinishReason = 'stop' | 'length';

export interface Usage {
  promptTokens: number;
  completionTokens: number;
}

/**
 * Generation is a stream of text deltas ending with one `done` (non-streaming answers collect it).
 * `extensions` carries engine facts a client may read, e.g. the OCR model's confidence.
 */
export type GenerationEvent =
  | { type: 'delta'; text: string }
  | { type: 'done'; finishReason: FinishReason; usage: Usage; extensions?: Record<string, unknown> };

/** `unavailable`: its engine cannot be reached now (an upstream down); requests for it are answered 503. */
export type ModelStatus = 'ready' | 'loading' | 'failed' | 'unavailable';

export interface EngineModel {
  id: string;
  contextLength: number;
  inputModalities: ('text' | 'image')[];
  /** Whether an image may come as an http(s) URL (else base64 data URIs only). */
  urlImageInput: boolean;
  status: ModelStatus;
  /** Why a model failed (a malformed file, an engine crash), for the listing and the logs. */
  error?: string;
}

export interface TokenizeResult {
  count: number;
  maxModelLen: number;
  tokens: number[];
}

export interface EngineHealth {
  ok: boolean;
  detail?: string;
}

export interface TextEngine {
  /** The engine's kind, named in refusals ("… is not supported by the llama engine"). */
  readonly kind: 'llama' | 'openai-upstream' | 'ocr';
  models(): Promise<EngineModel[]>;
  generate(request: GenerationRequest): AsyncIterable<GenerationEvent>;
  tokenize(model: string, input: GenerationInput): Promise<TokenizeResult>;
  /** Parameters this engine cannot honour: the interface refuses them (never ignores them silently). */
  readonly unsupported: ReadonlySet<SamplingParam | GuidedParam>;
  health(): Promise<EngineHealth>;
  close(): Promise<void>;
}

/**
 * Why an engine could not answer. Interfaces map the reason to their status: `model_not_found`
 * 404, `invalid_request` 422 on Service T and 400 on Service I and the proxy (with `param`),
 * `unsupported_parameter` likewise, `upstream_error` 502, `unavailable` and `model_loading` 503,
 * `timeout` 503.
 */
export type EngineErrorReason =
  | 'model_not_found'
  | 'invalid_request'
  | 'unsupported_parameter'
  | 'upstream_error'
  | 'unavailable'
  | 'model_loading'
  | 'timeout';

export class EngineError extends Error {
  constructor(
    readonly reason: EngineErrorReason,
    message: string,
    readonly param?: string,
  ) {
    super(message);
    this.name = 'EngineError';
  }
}
