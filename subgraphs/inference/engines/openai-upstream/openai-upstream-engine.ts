import type { Logger } from 'pino';
import { Pool, type Dispatcher } from 'undici';
import type {
  ChatMessage,
  ContentPart,
  EngineHealth,
  EngineModel,
  FinishReason,
  GenerationEvent,
  GenerationInput,
  GenerationRequest,
  ModelStatus,
  TextEngine,
  TokenizeResult,
  ToolDefinition,
  Usage,
} from '../../engine/text-engine.js';
import { EngineError, type EmbeddingRequest, type EmbeddingResult, type TokenLogprob } from '../../engine/text-engine.js';
import { guardedImageFetcher, type ImageFetcher, type PrivateImageUrls } from '../../image-input/image-fetcher.js';
import { IMAGE_INPUT_DEFAULTS, inlineImageUrl } from '../../image-input/image-input.js';
import { readSseEvents } from './sse-events.js';
import { engineErrorFor, engineErrorForConnection, isErrorPayload, readFailure } from './upstream-errors.js';
import { guidedBody, samplingBody, unsupportedFor, type UpstreamFlavour } from './upstream-flavour.js';
import { injectTraceHeaders, inSpan, SpanKind, tracerOf } from '../../../../core/telemetry/tracing.js';

const upstreamTracer = tracerOf('inference');

export interface UpstreamTimeouts {
  /** Opening the TCP (and TLS) connection. */
  connectMs: number;
  /** From sending a generation until its first body byte (queueing and prompt processing). */
  firstByteMs: number;
  /** A whole generation, from sending it to its last byte. */
  totalMs: number;
  /** Model listings, health probes and token counts (the spec's 30 s for listing endpoints). */
  listingMs: number;
}

export interface OpenAiUpstreamOptions {
  /** The server's root, e.g. http://gpu-1:8000 (a trailing /v1 is accepted and dropped). */
  baseUrl: string;
  /** Sent as `Authorization: Bearer …` when set. */
  apiKey?: string;
  flavour?: UpstreamFlavour;
  timeouts?: Partial<UpstreamTimeouts>;
  /** Only these upstream model ids are listed and served; all of them when absent. */
  models?: string[];
  /**
   * Whether the upstream's models call tools: vLLM does when started with --enable-auto-tool-choice
   * and a tool-call parser, llama.cpp's server with --jinja; the operator says so. OpenAI always does.
   */
  tools?: boolean;
  /** Models the operator declares to take images, where the upstream's listing does not say (vLLM, Ollama, OpenAI). */
  imageModels?: string[];
  /** How long a model listing is reused. */
  modelCacheMs?: number;
  /** Keep-alive connections kept open to the upstream. */
  connections?: number;
  /** Where upstream failures are logged with the upstream's own message. */
  logger?: Logger;
  /** Largest image accepted, fetched from a URL (default 10 MiB, as the OCR engine's). */
  maxImageBytes?: number;
  imageFetchTimeoutMs?: number;
  /** Image URLs may name loopback and private addresses: all (development and tests), or those in the listed networks. */
  allowPrivateImageUrls?: PrivateImageUrls;
  /** How image URLs are read; defaults to the SSRF-guarded fetcher. */
  fetcher?: ImageFetcher;
}

/** How much of an upstream's error body the log keeps. */
const LOGGED_BODY_CHARS = 2_000;

export const DEFAULT_UPSTREAM_TIMEOUTS: UpstreamTimeouts = { connectMs: 5_000, firstByteMs: 120_000, totalMs: 600_000, listingMs: 30_000 };

type Deadline = 'connect' | 'first byte' | 'total' | 'listing';

/**
 * A TextEngine over an OpenAI-compatible server (vLLM, llama.cpp's llama-server, Ollama, OpenAI):
 * always streams with usage, translates sampling and guided output to the flavour's wire names,
 * and answers failures with EngineErrors of its own wording.
 */
export class OpenAiUpstreamEngine implements TextEngine {
  readonly kind = 'openai-upstream' as const;
  /** vLLM and OpenAI generate `n` choices in one request; llama.cpp's server refuses n > 1 and Ollama ignores it, so those are repeated. */
  readonly choices: TextEngine['choices'];
  readonly unsupported: TextEngine['unsupported'];
  readonly flavour: UpstreamFlavour;
  private readonly pool: Pool;
  private readonly prefix: string;
  private readonly timeouts: UpstreamTimeouts;
  private readonly filter?: ReadonlySet<string>;
  private readonly modelCacheMs: number;
  private listing?: { at: number; models: Promise<EngineModel[]> };
  private readonly inFlight = new Set<AbortController>();
  private readonly fetcher: ImageFetcher;

  constructor(private readonly options: OpenAiUpstreamOptions) {
    const url = new URL(options.baseUrl);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new EngineError('invalid_request', 'The upstream base URL must be http or https');
    this.flavour = options.flavour ?? 'openai';
    this.unsupported = unsupportedFor(this.flavour);
    this.choices = this.flavour === 'vllm' || this.flavour === 'openai' ? 'native' : undefined;
    this.timeouts = { ...DEFAULT_UPSTREAM_TIMEOUTS, ...options.timeouts };
    this.prefix = url.pathname.replace(/\/+$/, '').replace(/\/v1$/, '');
    this.filter = options.models ? new Set(options.models) : undefined;
    this.modelCacheMs = options.modelCacheMs ?? 10_000;
    this.fetcher = options.fetcher ?? guardedImageFetcher(options.allowPrivateImageUrls ?? false);
    this.pool = new Pool(url.origin, {
      connections: options.connections ?? 16,
      connect: { timeout: this.timeouts.connectMs },
      // Our own timers decide (they tell a timeout from the caller's abort); these are a backstop.
      headersTimeout: this.timeouts.totalMs,
      bodyTimeout: this.timeouts.totalMs,
    });
  }

  async models(): Promise<EngineModel[]> {
    const now = Date.now();
    if (this.listing && now - this.listing.at < this.modelCacheMs) return this.listing.models;
    const models = this.fetchModels();
    this.listing = { at: now, models };
    // A failed listing is not remembered: the next call asks again.
    models.catch(() => {
      if (this.listing?.models === models) this.listing = undefined;
    });
    return models;
  }

  async health(): Promise<EngineHealth> {
    // llama.cpp and vLLM have a cheap /health; Ollama and OpenAI answer the model listing.
    const path = this.flavour === 'llama.cpp' || this.flavour === 'vllm' ? '/health' : '/v1/models';
    try {
      await this.call('GET', path, undefined, undefined, (body) => body.dump());
      return { ok: true };
    } catch (error) {
      if (error instanceof EngineError) return { ok: false, detail: error.message };
      throw error;
    }
  }

  async *generate(request: GenerationRequest): AsyncGenerator<GenerationEvent> {
    this.assertServed(request.model);
    const chat = request.input.kind === 'chat';
    // Before any deadline of the upstream's starts: the images are ours to fetch, not its.
    const input = await this.inlineImages(request.input, request.signal);
    const tools = request.tools;
    const passthrough = request.passthrough ?? {};
    // Several choices: every event names its choice, and each choice ends with its own finish reason.
    const several = (request.choices ?? 1) > 1;
    const finishes: (FinishReason | undefined)[] = [];
    // vLLM's own parameters mean nothing to the other flavours, which would ignore them.
    const foreign = Object.keys(passthrough)[0];
    if (foreign !== undefined && this.flavour !== 'vllm') throw new EngineError('unsupported_parameter', `${foreign} is not supported by the ${this.flavour} upstream`, foreign);
    const body = {
      model: request.model,
      ...(input.kind === 'chat' ? { messages: wireMessages(input.messages) } : { prompt: input.prompt }),
      ...(tools
        ? {
            tools: tools.definitions.map((t) => ({ type: 'function', function: t })),
            tool_choice: typeof tools.choice === 'object' ? { type: 'function', function: { name: tools.choice.name } } : tools.choice,
            parallel_tool_calls: tools.parallel,
          }
        : {}),
      ...samplingBody(this.flavour, request.sampling),
      ...guidedBody(this.flavour, request.guided, request.input),
      ...passthrough,
      ...(request.logprobs ? (chat ? { logprobs: true, top_logprobs: request.logprobs.top } : { logprobs: request.logprobs.top }) : {}),
      ...(several ? { n: request.choices } : {}),
      stream: true,
      // Without it a stream carries no usage; with it the last chunk has the exact counts.
      stream_options: { include_usage: true },
    };
    const controller = new AbortController();
    const deadline = this.deadlines(controller, request.signal, ['first byte', 'total']);
    this.inFlight.add(controller);
    try {
      const response = await this.send('POST', chat ? '/v1/chat/completions' : '/v1/completions', body, controller, deadline, request.model);
      // The upstream took the request (vLLM answers its headers before the first token): the client may hear so now.
      request.onAccepted?.();
      let usage: Usage | undefined;
      let ended = false;
      try {
        for await (const event of readSseEvents(firstByte(response.body, () => deadline.clear('first byte')))) {
          // Read on to the body's end after [DONE]: a body left unread would cost the pooled connection.
          if (ended) continue;
          if (event.data === '[DONE]') {
            ended = true;
            continue;
          }
          const payload = this.parseChunk(event.data);
          if (event.event === 'error' || isErrorPayload(payload)) throw this.failure(readFailure(200, payload), request.model);
          const chunk = payload as StreamChunk;
          for (const choice of chunk.choices ?? []) {
            const index = several ? choice.index : 0;
            if (!Number.isInteger(index) || index! < 0 || index! >= (request.choices ?? 1)) throw this.malformed('The upstream engine streamed a choice it was not asked for');
            const of = several ? { choice: index! } : {};
            const text = chat ? choice.delta?.content : choice.text;
            if (typeof text === 'string' && text !== '') {
              const logprobs = request.logprobs ? tokenLogprobs(chat, choice.logprobs) : undefined;
              yield logprobs ? { type: 'delta', text, logprobs, ...of } : { type: 'delta', text, ...of };
            }
            for (const call of (chat && Array.isArray(choice.delta?.tool_calls) ? choice.delta.tool_calls : []) as WireToolCallDelta[]) {
              if (!Number.isInteger(call?.index)) throw this.malformed('The upstream engine streamed a tool call in an unknown shape');
              const name = call.function?.name;
              yield {
                type: 'tool_call',
                index: call.index!,
                ...(typeof call.id === 'string' ? { id: call.id } : {}),
                ...(typeof name === 'string' ? { name } : {}),
                arguments: typeof call.function?.arguments === 'string' ? call.function.arguments : '',
                ...of,
              };
            }
            if (choice.finish_reason) {
              finishes[index!] = this.finishReason(choice.finish_reason);
              if (several) yield { type: 'delta', text: '', choice: index!, finishReason: finishes[index!] };
            }
          }
          if (chunk.usage) usage = this.usage(chunk.usage);
        }
      } catch (error) {
        throw this.mapFailure(error, deadline, request.signal, 'stream');
      } finally {
        // Breaking out early (the consumer stopped) must cancel the upstream, not leave it generating.
        if (!ended) response.body.destroy();
      }
      const finished = Array.from({ length: request.choices ?? 1 }, (_, i) => finishes[i]).every((reason) => reason !== undefined);
      if (!ended && !(finished && usage)) throw this.malformed('The upstream engine ended the stream before it finished');
      const finishReason = finishes[0];
      if (!finished || !finishReason) throw this.malformed('The upstream engine ended the stream without a finish reason');
      if (!usage) throw this.malformed('The upstream engine did not report token usage');
      yield { type: 'done', finishReason, usage };
    } finally {
      deadline.clear('all');
      this.inFlight.delete(controller);
    }
  }

  async tokenize(model: string, input: GenerationInput, tools?: ToolDefinition[]): Promise<TokenizeResult> {
    this.assertServed(model);
    if (this.flavour === 'vllm') {
      const inlined = await this.inlineImages(input, AbortSignal.timeout(this.timeouts.listingMs));
      const offered = tools ? { tools: tools.map((t) => ({ type: 'function', function: t })) } : {};
      const body = inlined.kind === 'chat' ? { model, messages: wireMessages(inlined.messages), ...offered } : { model, prompt: inlined.prompt };
      const answer = await this.json('POST', '/tokenize', body, model);
      const tokens = answer.tokens;
      if (!isTokenList(tokens) || typeof answer.count !== 'number' || typeof answer.max_model_len !== 'number')
        throw this.malformed('The upstream engine answered the token count in an unknown shape');
      return { count: answer.count, maxModelLen: answer.max_model_len, tokens };
    }
    if (this.flavour === 'llama.cpp') {
      if (tools) throw new EngineError('unsupported_parameter', 'Token counts with tools are not available on this upstream (llama.cpp)', 'tools');
      const listed = (await this.models()).find((entry) => entry.id === model);
      if (!listed) throw new EngineError('model_not_found', `No model "${model}" on the upstream engine`, 'model');
      let content: string;
      if (input.kind === 'chat') {
        if (input.messages.some((message) => Array.isArray(message.content) && message.content.some((part) => part.type !== 'text')))
          throw new EngineError('invalid_request', 'Token counts of images are not available on this upstream (llama.cpp)', 'messages');
        // The server's own chat template renders the prompt that generation would see.
        const rendered = await this.json('POST', '/apply-template', { messages: input.messages }, model);
        if (typeof rendered.prompt !== 'string') throw this.malformed('The upstream engine answered the chat template in an unknown shape');
        content = rendered.prompt;
      } else content = input.prompt;
      const answer = await this.json('POST', '/tokenize', { content, add_special: true }, model);
      if (!isTokenList(answer.tokens)) throw this.malformed('The upstream engine answered the token count in an unknown shape');
      return { count: answer.tokens.length, maxModelLen: listed.contextLength, tokens: answer.tokens };
    }
    throw new EngineError('unsupported_parameter', `Token counting is not available on this upstream (${this.flavour}): it has no tokenize endpoint`);
  }

  /** Passes the inputs to the upstream's /v1/embeddings as floats; its vectors and prompt token count come back. */
  async embed(request: EmbeddingRequest): Promise<EmbeddingResult> {
    this.assertServed(request.model);
    if (this.flavour !== 'vllm' && this.flavour !== 'openai') throw new EngineError('unsupported_parameter', `Embeddings are not served by this upstream (${this.flavour})`, 'model');
    const body = { model: request.model, input: request.inputs, encoding_format: 'float', ...(request.dimensions !== undefined ? { dimensions: request.dimensions } : {}) };
    const answer = await this.json('POST', '/v1/embeddings', body, request.model, { signal: request.signal });
    const data = answer.data;
    const usage = answer.usage as { prompt_tokens?: unknown } | undefined;
    if (!Array.isArray(data) || typeof usage?.prompt_tokens !== 'number') throw this.malformed('The upstream engine answered the embeddings in an unknown shape');
    const vectors: number[][] = [];
    for (const entry of data as { index?: unknown; embedding?: unknown }[]) {
      const { index, embedding } = entry ?? {};
      if (typeof index !== 'number' || !Array.isArray(embedding) || !embedding.every((v) => typeof v === 'number')) throw this.malformed('The upstream engine answered the embeddings in an unknown shape');
      vectors[index] = embedding as number[];
    }
    return { vectors, promptTokens: usage.prompt_tokens };
  }

  async close(): Promise<void> {
    for (const controller of this.inFlight) controller.abort(new EngineError('unavailable', 'The engine is closing'));
    if (!this.pool.closed) await this.pool.close();
  }

  /**
   * The input with every image URL replaced by the image itself as a data URI, fetched through the
   * SSRF guard within the size and time limits: an upstream given a URL would fetch it from its own
   * network, where the platform's guard does not reach. Refusals name the content part.
   */
  private async inlineImages(input: GenerationInput, signal: AbortSignal): Promise<GenerationInput> {
    if (input.kind !== 'chat' || !input.messages.some((message) => Array.isArray(message.content) && message.content.some((part) => part.type === 'image_url'))) return input;
    const limits = {
      maxBytes: this.options.maxImageBytes ?? IMAGE_INPUT_DEFAULTS.maxImageBytes,
      fetchTimeoutMs: this.options.imageFetchTimeoutMs ?? IMAGE_INPUT_DEFAULTS.imageFetchTimeoutMs,
      fetcher: this.fetcher,
      signal,
    };
    const messages: ChatMessage[] = [];
    for (const [i, message] of input.messages.entries()) {
      if (!Array.isArray(message.content)) {
        messages.push(message);
        continue;
      }
      const content: ContentPart[] = [];
      for (const [j, part] of message.content.entries()) {
        if (part.type !== 'image_url') content.push(part);
        else content.push({ type: 'image_url', image_url: { ...part.image_url, url: await inlineImageUrl(part.image_url.url, `messages[${i}].content[${j}].image_url.url`, limits) } });
      }
      messages.push({ ...message, content });
    }
    return { kind: 'chat', messages };
  }

  private async fetchModels(): Promise<EngineModel[]> {
    const answer = await this.json('GET', '/v1/models', undefined, undefined);
    if (!Array.isArray(answer.data)) throw this.malformed('The upstream engine listed its models in an unknown shape');
    const models: EngineModel[] = [];
    for (const entry of answer.data as ModelEntry[]) {
      if (typeof entry?.id !== 'string' || (this.filter && !this.filter.has(entry.id))) continue;
      const modalities = entry.architecture?.input_modalities;
      models.push({
        id: entry.id,
        // vLLM's max_model_len, llama.cpp's n_ctx_train; 0 where the upstream does not say.
        contextLength: positive(entry.max_model_len) ?? positive(entry.meta?.n_ctx_train) ?? 0,
        inputModalities: (Array.isArray(modalities) && modalities.includes('image')) || this.options.imageModels?.includes(entry.id) ? ['text', 'image'] : ['text'],
        // The platform fetches a URL image itself and sends the upstream its data URI.
        urlImageInput: true,
        status: this.modelStatus(entry),
        ...((this.options.tools ?? this.flavour === 'openai') ? { tools: true } : {}),
        // vLLM and OpenAI serve /v1/embeddings (vLLM refuses it for a generative model, answered as its error).
        embeddings: this.flavour === 'vllm' || this.flavour === 'openai',
      });
    }
    return models;
  }

  private modelStatus(entry: ModelEntry): ModelStatus {
    // llama.cpp's router reports each model's state; a lone llama-server has meta null while loading.
    const status = entry.status;
    if (status && typeof status === 'object') {
      if (status.failed) return 'failed';
      if (status.value === 'loading' || status.value === 'downloading') return 'loading';
      return 'ready';
    }
    if (this.flavour === 'llama.cpp' && 'meta' in entry && entry.meta === null) return 'loading';
    return 'ready';
  }

  private assertServed(model: string): void {
    if (this.filter && !this.filter.has(model)) throw new EngineError('model_not_found', `No model "${model}" on the upstream engine`, 'model');
  }

  private finishReason(reason: string): FinishReason {
    if (reason === 'length') return 'length';
    if (reason === 'tool_calls') return 'tool_calls';
    // vLLM says abort when it dropped the request itself: no answer to give.
    if (reason === 'abort') throw this.malformed('The upstream engine aborted the generation');
    return 'stop';
  }

  private usage(raw: { prompt_tokens?: unknown; completion_tokens?: unknown }): Usage {
    const { prompt_tokens: prompt, completion_tokens: completion } = raw;
    if (!Number.isInteger(prompt) || !Number.isInteger(completion)) throw this.malformed('The upstream engine reported token usage in an unknown shape');
    return { promptTokens: prompt as number, completionTokens: completion as number };
  }

  private parseChunk(data: string): unknown {
    try {
      return JSON.parse(data);
    } catch {
      this.options.logger?.warn({ flavour: this.flavour, data: data.slice(0, 200) }, 'upstream stream event is not JSON');
      throw this.malformed('The upstream engine sent a malformed stream');
    }
  }

  private malformed(message: string): EngineError {
    return new EngineError('upstream_error', message);
  }

  // The upstream's own words go to the log only: the client gets ours (upstream-errors.ts).
  private failure(failure: ReturnType<typeof readFailure>, model: string | undefined, body?: string): EngineError {
    this.options.logger?.warn(
      { flavour: this.flavour, model, status: failure.status, type: failure.type, upstreamMessage: failure.message, ...(body !== undefined ? { upstreamBody: body.slice(0, LOGGED_BODY_CHARS) } : {}) },
      'upstream engine refused',
    );
    return engineErrorFor(failure, model);
  }

  private json(method: string, path: string, body: unknown, model: string | undefined, caller?: CallerBound): Promise<Record<string, unknown>> {
    return this.call(method, path, body, model, async (response) => {
      let parsed: unknown;
      try {
        parsed = await response.json();
      } catch (error) {
        if (response.destroyed) throw error;
        throw this.malformed('The upstream engine answered with malformed JSON');
      }
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw this.malformed('The upstream engine answered in an unknown shape');
      return parsed as Record<string, unknown>;
    }, caller);
  }

  // A short call (listing, probe, token count), answer read and all, under the listing deadline;
  // a client's call (embeddings) under its own signal and the connect and total deadlines instead.
  private async call<T>(method: string, path: string, body: unknown, model: string | undefined, read: (response: ResponseBody) => Promise<T>, caller?: CallerBound): Promise<T> {
    const controller = new AbortController();
    const deadline = this.deadlines(controller, caller?.signal, caller ? ['connect', 'total'] : ['listing']);
    this.inFlight.add(controller);
    try {
      const response = await this.send(method, path, body, controller, deadline, model);
      try {
        return await read(response.body);
      } catch (error) {
        throw this.mapFailure(error, deadline, caller?.signal, 'stream');
      }
    } finally {
      deadline.clear('all');
      this.inFlight.delete(controller);
    }
  }

  // A CLIENT span from the call to the upstream's answering headers (a stream goes on after it).
  private send(method: string, path: string, body: unknown, controller: AbortController, deadline: Deadlines, model: string | undefined): Promise<Dispatcher.ResponseData> {
    const attributes = { 'inference.flavour': this.flavour, ...(model ? { 'gen_ai.request.model': model } : {}) };
    return inSpan(upstreamTracer, `inference upstream ${method} ${path}`, { kind: SpanKind.CLIENT, attributes }, () => this.sendUntraced(method, path, body, controller, deadline, model));
  }

  private async sendUntraced(method: string, path: string, body: unknown, controller: AbortController, deadline: Deadlines, model: string | undefined): Promise<Dispatcher.ResponseData> {
    const headers: Record<string, string> = { accept: body === undefined ? 'application/json' : 'text/event-stream, application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (this.options.apiKey) headers.authorization = `Bearer ${this.options.apiKey}`;
    // The call span's traceparent: vLLM continues the trace (--otlp-traces-endpoint). Nothing when tracing is off.
    injectTraceHeaders(headers);
    let response: Dispatcher.ResponseData;
    try {
      response = await this.pool.request({
        method: method as 'GET' | 'POST',
        path: this.prefix + path,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: controller.signal,
      });
    } catch (error) {
      throw this.mapFailure(error, deadline, deadline.callerSignal, 'connect');
    }
    if (response.statusCode >= 200 && response.statusCode < 300) return response;
    let text: string;
    try {
      text = await response.body.text();
    } catch (error) {
      if (controller.signal.aborted) throw this.mapFailure(error, deadline, deadline.callerSignal, 'stream');
      // The status still says what failed; the body was only its detail.
      text = '';
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    throw this.failure(readFailure(response.statusCode, parsed), model, text);
  }

  // A thrown failure becomes the caller's abort reason, our timeout, or an EngineError.
  private mapFailure(error: unknown, deadline: Deadlines, callerSignal: AbortSignal | undefined, phase: 'connect' | 'stream'): unknown {
    if (error instanceof EngineError) return error;
    if (callerSignal?.aborted) return callerSignal.reason;
    if (deadline.expired) return new EngineError('timeout', `The upstream engine did not answer in time (${deadline.expired} timeout)`);
    const closing = deadline.controller.signal.reason;
    if (closing instanceof EngineError) return closing;
    const mapped = engineErrorForConnection(error, phase);
    // An upstream that cannot be reached is listed again on the next call, not served from a listing it may no longer answer.
    if (mapped.reason === 'unavailable') this.listing = undefined;
    this.options.logger?.warn({ flavour: this.flavour, err: error }, 'upstream connection failed');
    return mapped;
  }

  private deadlines(controller: AbortController, callerSignal: AbortSignal | undefined, kinds: Deadline[]): Deadlines {
    const timers = new Map<Deadline | 'all', NodeJS.Timeout>();
    const state: Deadlines = {
      controller,
      callerSignal,
      expired: undefined,
      clear: (kind) => {
        for (const [name, timer] of timers)
          if (kind === 'all' || name === kind) {
            clearTimeout(timer);
            timers.delete(name);
          }
        if (kind === 'all') callerSignal?.removeEventListener('abort', onAbort);
      },
    };
    const ms: Record<Deadline, number> = {
      connect: this.timeouts.connectMs,
      'first byte': this.timeouts.firstByteMs,
      total: this.timeouts.totalMs,
      listing: this.timeouts.listingMs,
    };
    for (const kind of kinds)
      timers.set(
        kind,
        setTimeout(() => {
          state.expired ??= kind;
          controller.abort(new EngineError('timeout', `The upstream engine did not answer in time (${kind} timeout)`));
        }, ms[kind]),
      );
    const onAbort = () => controller.abort(callerSignal?.reason);
    if (callerSignal?.aborted) controller.abort(callerSignal.reason);
    else callerSignal?.addEventListener('abort', onAbort, { once: true });
    return state;
  }
}

type ResponseBody = Dispatcher.ResponseData['body'];

interface Deadlines {
  controller: AbortController;
  callerSignal: AbortSignal | undefined;
  expired: Deadline | undefined;
  clear(kind: Deadline | 'all'): void;
}

/** A streamed tool_calls entry as OpenAI and vLLM send it. */
interface WireToolCallDelta {
  index?: number;
  id?: unknown;
  function?: { name?: unknown; arguments?: unknown };
}

/** The engine's chat messages in OpenAI's wire names (tool_calls, tool_call_id). */
function wireMessages(messages: readonly ChatMessage[]): unknown[] {
  return messages.map((m) => ({
    role: m.role,
    content: m.content,
    ...(m.toolCalls ? { tool_calls: m.toolCalls.map((call) => ({ id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } })) } : {}),
    ...(m.toolCallId !== undefined ? { tool_call_id: m.toolCallId } : {}),
  }));
}

interface StreamChunk {
  choices?: { index?: number; delta?: { content?: unknown; tool_calls?: unknown }; text?: unknown; logprobs?: unknown; finish_reason?: string | null }[];
  usage?: { prompt_tokens?: unknown; completion_tokens?: unknown } | null;
}

interface ModelEntry {
  id?: unknown;
  max_model_len?: unknown;
  meta?: { n_ctx_train?: unknown } | null;
  architecture?: { input_modalities?: unknown };
  status?: { value?: unknown; failed?: unknown };
}

// Passes the body through, calling `first` when its first chunk arrives.
/** A call made for a client: its signal ends the upstream request. */
interface CallerBound {
  signal: AbortSignal;
}

async function* firstByte(body: AsyncIterable<Buffer>, first: () => void): AsyncGenerator<Buffer> {
  let seen = false;
  for await (const chunk of body) {
    if (!seen) {
      seen = true;
      first();
    }
    yield chunk;
  }
}

function positive(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isInteger(value) && value > 0 ? value : undefined;
}

function isTokenList(value: unknown): value is number[] {
  return Array.isArray(value) && value.every((token) => Number.isInteger(token));
}

/** A chunk's log probabilities in OpenAI's (vLLM's) shapes: chat's {content: [...]}, completions' parallel arrays. */
function tokenLogprobs(chat: boolean, wire: unknown): TokenLogprob[] | undefined {
  if (typeof wire !== 'object' || wire === null) return undefined;
  const bytesOf = (value: unknown) => (Array.isArray(value) ? (value as number[]) : null);
  if (chat) {
    const content = (wire as { content?: unknown }).content;
    if (!Array.isArray(content)) return undefined;
    return content.map((entry: { token?: unknown; logprob?: unknown; bytes?: unknown; top_logprobs?: unknown }) => ({
      token: String(entry.token ?? ''),
      logprob: Number(entry.logprob),
      bytes: bytesOf(entry.bytes),
      top: (Array.isArray(entry.top_logprobs) ? entry.top_logprobs : []).map((alt: { token?: unknown; logprob?: unknown; bytes?: unknown }) => ({
        token: String(alt.token ?? ''),
        logprob: Number(alt.logprob),
        bytes: bytesOf(alt.bytes),
      })),
    }));
  }
  const { tokens, token_logprobs: logprobs, top_logprobs: tops } = wire as { tokens?: unknown; token_logprobs?: unknown; top_logprobs?: unknown };
  if (!Array.isArray(tokens) || !Array.isArray(logprobs)) return undefined;
  const bytes = (token: string) => [...Buffer.from(token, 'utf8')];
  return tokens.map((token: unknown, i) => {
    const top = Array.isArray(tops) && typeof tops[i] === 'object' && tops[i] !== null ? Object.entries(tops[i] as Record<string, unknown>) : [];
    return { token: String(token), logprob: Number(logprobs[i]), bytes: bytes(String(token)), top: top.map(([alt, lp]) => ({ token: alt, logprob: Number(lp), bytes: bytes(alt) })) };
  });
}
