/**
 * The contract between the inference interfaces (Service T, Service I text, the proxy, the
 * gateway, GraphQL) and the engines behind providers: an OpenAI-compatible upstream, the embedded
 * llama.cpp, the embedded OCR model. Interfaces validate the wire format and map errors to their
 * own statuses; engines only generate, tokenize and list, and never invent an answer: what they
 * cannot do they refuse with an EngineError.
 */

export type ChatRole = 'system' | 'user' | 'assistant' | 'tool';

export type ContentPart = { type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } };

/** A function call the model made: `arguments` is the JSON text it wrote, as OpenAI carries it. */
export interface ToolCall {
  id: string;
  name: string;
  arguments: string;
}

export interface ChatMessage {
  role: ChatRole;
  /** null only on an assistant turn that is tool calls alone. */
  content: string | ContentPart[] | null;
  /** An assistant turn's calls. */
  toolCalls?: ToolCall[];
  /** A tool turn: the call it answers. */
  toolCallId?: string;
}

/** A function the model may call; `parameters` is its arguments' JSON Schema. */
export interface ToolDefinition {
  name: string;
  description?: string;
  parameters?: Record<string, unknown>;
  strict?: boolean;
}

/** OpenAI's tool_choice: none, auto, required, or one function by name. */
export type ToolChoice = 'none' | 'auto' | 'required' | { name: string };

export interface ToolUse {
  definitions: ToolDefinition[];
  choice: ToolChoice;
  /** Whether the model may make several calls in one turn (OpenAI's parallel_tool_calls, default true). */
  parallel: boolean;
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
  /** Functions the model may call (chat only); an engine that cannot call tools refuses with `unsupported_parameter` on `tools`. */
  tools?: ToolUse;
  /** Per-token log probabilities, with `top` alternatives each (0: the chosen token's only). */
  logprobs?: { top: number };
  /**
   * Engine-specific parameters passed verbatim to an upstream that takes them (vLLM's
   * structured_outputs, min_tokens, ignore_eos, chat_template_kwargs, guided_grammar); an engine
   * that cannot honour one refuses it with `unsupported_parameter`, naming it.
   */
  passthrough?: Record<string, unknown>;
  /**
   * How many choices (OpenAI's `n`), given only above 1 and only to an engine whose `choices` is
   * 'native'; its events then carry their choice.
   */
  choices?: number;
  /** Aborted when the client goes away or the interface's timeout passes: the engine stops at once. */
  signal: AbortSignal;
  /**
   * Called by an engine that can tell when it has accepted the request, before its first token
   * (an upstream answered 200 with its stream), so that a streamed answer starts at once. What
   * the engine refuses is refused before it.
   */
  onAccepted?: () => void;
}

export type FinishReason = 'stop' | 'length' | 'tool_calls';

/** One token's log probability (natural log), with its alternatives when asked for. */
export interface TokenLogprob {
  token: string;
  logprob: number;
  bytes: number[] | null;
  top: { token: string; logprob: number; bytes: number[] | null }[];
}

export interface Usage {
  promptTokens: number;
  completionTokens: number;
}

/**
 * Generation is a stream of text deltas ending with one `done` (non-streaming answers collect it).
 * `extensions` carries engine facts a client may read, e.g. the OCR model's confidence.
 */
export type GenerationEvent =
  /**
   * `choice`: which of the request's choices the event belongs to (absent: 0). When several were
   * asked for, each choice ends with a delta carrying its `finishReason` (its text may be empty);
   * `done` then ends them all, with the usage totals.
   */
  | { type: 'delta'; text: string; logprobs?: TokenLogprob[]; choice?: number; finishReason?: FinishReason }
  /**
   * A piece of tool call `index` (OpenAI's streamed tool_calls delta): the first piece of a call
   * carries its id and name, later ones more of its arguments' JSON text.
   */
  | { type: 'tool_call'; index: number; id?: string; name?: string; arguments: string; choice?: number }
  | { type: 'done'; finishReason: FinishReason; usage: Usage; extensions?: Record<string, unknown> };

export interface EmbeddingRequest {
  model: string;
  /** Texts, or token id arrays (OpenAI's input forms, one vector each). */
  inputs: (string | number[])[];
  /** Fewer dimensions than the model's, where the engine can give them. */
  dimensions?: number;
  signal: AbortSignal;
}

export interface EmbeddingResult {
  vectors: number[][];
  promptTokens: number;
}

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
  /** Whether the model embeds (`embed` serves it); absent means no. */
  embeddings?: boolean;
  /** Whether the model can call tools; absent means no. */
  tools?: boolean;
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
  /** `tools`: the functions a chat call would offer, rendered into the prompt as generation renders them. */
  tokenize(model: string, input: GenerationInput, tools?: ToolDefinition[]): Promise<TokenizeResult>;
  /** Embeddings, on engines that can embed (the models listed with `embeddings: true`). */
  embed?(request: EmbeddingRequest): Promise<EmbeddingResult>;
  /**
   * How the engine gives several choices: 'native' generates them in one request (vLLM's `n`), 'one'
   * refuses more than one; absent, the generation service runs the request once per choice.
   */
  readonly choices?: 'native' | 'one';
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
