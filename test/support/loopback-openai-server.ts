import http from 'node:http';
import type net from 'node:net';

export type LoopbackFlavour = 'vllm' | 'llama.cpp';

export interface LoopbackModel {
  id: string;
  contextLength: number;
  vision?: boolean;
}

/** What the next requests meet; tests change it between calls. */
export interface LoopbackBehaviour {
  /** The answer, one streamed chunk per piece; cut short by max_tokens (one piece a token) or a stop string. */
  reply: string[];
  /** Wait before the response headers. */
  headerDelayMs: number;
  /** Wait between the headers and each chunk. */
  chunkDelayMs: number;
  /** Answer every request with this status and the flavour's error body. */
  fail?: { status: number; message: string; type?: string; param?: string };
  /** Send an error event after this many chunks, in the flavour's streaming form. */
  streamErrorAfter?: { chunks: number; code: number; message: string; type: string };
  /** Close the socket (once what was written is flushed) after this many chunks, without [DONE]. */
  cutAfterChunks?: number;
  /** Send a data line that is not JSON after this many chunks. */
  malformedAfterChunks?: number;
  /** Leave usage out of streams even when asked, as a server without stream_options would. */
  omitUsage?: boolean;
  /** Reset the connection instead of answering. */
  dropConnection?: boolean;
  /** llama.cpp: still loading its model (503 on every route, /health included). */
  loading: boolean;
  /** vLLM's error body: nested `{"error":{...}}` (current) or flat `{"object":"error",...}` (before 0.10). */
  vllmErrorStyle: 'nested' | 'flat';
  /** A stream's headers go at once (as vLLM's do); its first chunk waits for this. */
  firstChunkGate?: Promise<void>;
  /**
   * When the request offers tools: the calls the model makes instead of replying, each one's
   * arguments streamed in these pieces (one a token), as vLLM's tool-call parser streams them.
   */
  toolCalls?: { name: string; arguments: string[] }[];
  /** Text the model writes before its tool calls, in the same answer (real models often do); one token. */
  callText?: string;
}

export interface RecordedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: unknown;
  /** Set when the client hung up before the response ended. */
  closedEarly: boolean;
}

/**
 * A loopback server speaking the documented wire formats of vLLM's OpenAI-compatible server or of
 * llama.cpp's llama-server: models, chat and raw completions with SSE streaming (usage when the
 * client asks for it), tokenize, health and their error bodies. It computes its answers from the
 * request (max_tokens, stop strings, token counts), so tests compare the engine with what was served.
 */
export class LoopbackOpenAiServer {
  readonly requests: RecordedRequest[] = [];
  /** TCP connections accepted so far (keep-alive reuse keeps this at one). */
  connections = 0;
  behaviour: LoopbackBehaviour = LoopbackOpenAiServer.defaults();
  /** The usage the server reported for its last generation. */
  lastUsage?: { prompt_tokens: number; completion_tokens: number };
  private readonly sockets = new Set<net.Socket>();
  private readonly closeWaiters: (() => void)[] = [];

  private constructor(
    readonly flavour: LoopbackFlavour,
    readonly models: LoopbackModel[],
    private readonly server: http.Server,
    readonly url: string,
  ) {}

  static defaults(): LoopbackBehaviour {
    return { reply: ['Hello', ',', ' loop', 'back', ' world', '.'], headerDelayMs: 0, chunkDelayMs: 0, loading: false, vllmErrorStyle: 'nested' };
  }

  /** Starts a server on a free loopback port. */
  static async start(flavour: LoopbackFlavour, models: LoopbackModel[] = [{ id: 'loop-model', contextLength: 4096 }]): Promise<LoopbackOpenAiServer> {
    const server = http.createServer();
    server.keepAliveTimeout = 30_000;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as net.AddressInfo;
    const loopback = new LoopbackOpenAiServer(flavour, models, server, `http://127.0.0.1:${port}`);
    server.on('connection', (socket) => {
      loopback.connections++;
      loopback.sockets.add(socket);
      socket.on('close', () => loopback.sockets.delete(socket));
    });
    server.on('request', (req, res) => void loopback.handle(req, res));
    return loopback;
  }

  reset(): void {
    this.behaviour = LoopbackOpenAiServer.defaults();
    this.requests.length = 0;
    this.connections = this.sockets.size;
    this.lastUsage = undefined;
  }

  /** Resolves when a request's client hangs up before its response ended. */
  nextEarlyClose(): Promise<void> {
    return new Promise((resolve) => this.closeWaiters.push(resolve));
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    let body: unknown;
    try {
      body = text === '' ? undefined : JSON.parse(text);
    } catch {
      return this.error(res, 400, 'Invalid JSON body', 'BadRequestError');
    }
    const path = (req.url ?? '/').split('?')[0];
    const recorded: RecordedRequest = { method: req.method ?? 'GET', path, headers: req.headers, body, closedEarly: false };
    this.requests.push(recorded);
    res.on('close', () => {
      if (!res.writableFinished) {
        recorded.closedEarly = true;
        for (const resolve of this.closeWaiters.splice(0)) resolve();
      }
    });
    const behaviour = this.behaviour;
    if (behaviour.headerDelayMs > 0) await sleep(behaviour.headerDelayMs);
    if (res.destroyed) return;
    if (behaviour.dropConnection) return void req.socket.destroy();
    if (behaviour.loading && this.flavour === 'llama.cpp')
      return this.send(res, 503, { error: { code: 503, message: 'Loading model', type: 'unavailable_error' } });
    if (behaviour.fail) return this.error(res, behaviour.fail.status, behaviour.fail.message, behaviour.fail.type, behaviour.fail.param);
    const route = `${req.method} ${path}`;
    const request = (body ?? {}) as Record<string, unknown>;
    switch (route) {
      case 'GET /health':
        return this.flavour === 'llama.cpp' ? this.send(res, 200, { status: 'ok' }) : this.send(res, 200, undefined);
      case 'GET /v1/models':
        return this.send(res, 200, { object: 'list', data: this.models.map((model) => this.modelCard(model)) });
      case 'POST /v1/chat/completions':
      case 'POST /v1/completions':
        return this.complete(res, request, route === 'POST /v1/chat/completions');
      case 'POST /v1/embeddings':
        if (this.flavour !== 'vllm') break;
        return this.embeddings(res, request);
      case 'POST /tokenize':
        return this.tokenize(res, request);
      case 'POST /apply-template':
        if (this.flavour !== 'llama.cpp') break;
        return this.send(res, 200, { prompt: chatPrompt(request.messages) });
    }
    if (this.flavour === 'vllm') return this.send(res, 404, { detail: 'Not Found' });
    return this.send(res, 404, { error: { code: 404, message: 'File Not Found', type: 'not_found_error' } });
  }

  private modelCard(model: LoopbackModel): Record<string, unknown> {
    if (this.flavour === 'vllm')
      return { id: model.id, object: 'model', created: 1_700_000_000, owned_by: 'vllm', root: model.id, parent: null, max_model_len: model.contextLength, permission: [] };
    return {
      id: model.id,
      object: 'model',
      created: 1_700_000_000,
      owned_by: 'llamacpp',
      architecture: { input_modalities: model.vision ? ['text', 'image'] : ['text'], output_modalities: ['text'] },
      meta: { vocab_type: 2, n_vocab: 32000, n_ctx_train: model.contextLength, n_embd: 64, n_params: 1000, size: 4000 },
    };
  }

  private async complete(res: http.ServerResponse, request: Record<string, unknown>, chat: boolean): Promise<void> {
    const model = this.models.find((entry) => entry.id === request.model);
    // A lone llama-server serves its one model under any name; vLLM refuses a name it does not serve.
    if (!model && this.flavour === 'vllm') return this.error(res, 404, `The model \`${String(request.model)}\` does not exist.`, 'NotFoundError', 'model');
    if (chat && !Array.isArray(request.messages)) return this.error(res, 400, 'messages is required', 'BadRequestError', 'messages');
    if (!chat && typeof request.prompt !== 'string') return this.error(res, 400, 'prompt is required', 'BadRequestError', 'prompt');
    const prompt = chat ? chatPrompt(request.messages) : (request.prompt as string);
    const promptTokens = tokenIds(prompt, this.flavour === 'llama.cpp').length;
    const context = (model ?? this.models[0]).contextLength;
    const maxTokens = typeof request.max_tokens === 'number' ? request.max_tokens : Infinity;
    if (promptTokens + (Number.isFinite(maxTokens) ? maxTokens : 0) > context) {
      const message = `This model's maximum context length is ${context} tokens. However, you requested ${promptTokens + maxTokens} tokens.`;
      return this.flavour === 'vllm'
        ? this.error(res, 400, message, 'BadRequestError')
        : this.send(res, 400, { error: { code: 400, message: 'the request exceeds the available context size, try increasing it', type: 'exceed_context_size_error', n_prompt_tokens: promptTokens, n_ctx: context } });
    }
    // vLLM's n: choice i > 0 answers the reply with " <i>" before its last piece, so each choice's text is known.
    const n = typeof request.n === 'number' ? request.n : 1;
    // llama-server's OpenAI endpoints refuse more than one choice.
    if (n !== 1 && this.flavour === 'llama.cpp') return this.error(res, 400, 'Only one completion choice is allowed');
    const answers = Array.from({ length: n }, (_, i) => this.cut(i === 0 ? this.behaviour.reply : [...this.behaviour.reply.slice(0, -1), ` ${i}`, ...this.behaviour.reply.slice(-1)], maxTokens, request.stop));
    const pieces = answers[0]!.pieces;
    const finish = answers[0]!.finish;
    const calls = chat && Array.isArray(request.tools) && request.tool_choice !== 'none' ? (this.behaviour.toolCalls ?? chosenCalls(request)) : [];
    if (calls.length) return this.callTools(res, request, calls, promptTokens, n);
    const produced = answers.reduce((sum, answer) => sum + answer.pieces.length, 0);
    const usage = { prompt_tokens: promptTokens, completion_tokens: produced, total_tokens: promptTokens + produced };
    this.lastUsage = { prompt_tokens: usage.prompt_tokens, completion_tokens: usage.completion_tokens };
    const id = chat ? 'chatcmpl-loop' : 'cmpl-loop';
    const object = chat ? 'chat.completion.chunk' : 'text_completion';
    const modelName = String(request.model);
    // vLLM's logprobs when asked: each piece is one token of log probability -0.5, its alternatives lower.
    const top = chat ? (request.logprobs === true ? Number(request.top_logprobs ?? 0) : undefined) : typeof request.logprobs === 'number' ? request.logprobs : undefined;
    const offsets = new Array<number>(n).fill(0);
    const logprobsOf = (text: string, index: number) => {
      if (top === undefined || text === '') return {};
      const alternatives = Array.from({ length: top }, (_, i) => ({ token: `${text}${i}`, logprob: -1 - i }));
      if (chat) {
        const bytes = (token: string) => [...Buffer.from(token, 'utf8')];
        return { logprobs: { content: [{ token: text, logprob: -0.5, bytes: bytes(text), top_logprobs: alternatives.map((alt) => ({ ...alt, bytes: bytes(alt.token) })) }] } };
      }
      const at = offsets[index]!;
      offsets[index] = at + text.length;
      return { logprobs: { text_offset: [at], token_logprobs: [-0.5], tokens: [text], top_logprobs: [Object.fromEntries(alternatives.map((alt) => [alt.token, alt.logprob]))] } };
    };
    const choice = (text: string | undefined, finishReason: string | null, index = 0) =>
      chat
        ? { index, delta: text === undefined ? {} : { content: text }, ...logprobsOf(text ?? '', index), finish_reason: finishReason }
        : { index, text: text ?? '', ...logprobsOf(text ?? '', index), finish_reason: finishReason };
    if (request.stream !== true) {
      return this.send(res, 200, {
        id,
        object: chat ? 'chat.completion' : 'text_completion',
        model: modelName,
        choices: answers.map(({ pieces: own, finish: reason }, index) => {
          const text = own.join('');
          return chat ? { index, message: { role: 'assistant', content: text }, finish_reason: reason } : { index, text, finish_reason: reason };
        }),
        usage,
      });
    }
    const includeUsage = (request.stream_options as { include_usage?: unknown } | undefined)?.include_usage === true && !this.behaviour.omitUsage;
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    // Starlette (vLLM's server) sends the response start before iterating the stream.
    res.flushHeaders();
    const behaviour = this.behaviour;
    if (behaviour.firstChunkGate) await behaviour.firstChunkGate;
    const write = async (line: string) => {
      if (behaviour.chunkDelayMs > 0) await sleep(behaviour.chunkDelayMs);
      if (res.destroyed) return false;
      res.write(line);
      return true;
    };
    const data = (payload: unknown) => `data: ${JSON.stringify(payload)}\n\n`;
    if (chat) for (let index = 0; index < n; index++) if (!(await write(data({ id, object, model: modelName, choices: [{ index, delta: { role: 'assistant', content: '' }, finish_reason: null }] })))) return;
    if (n > 1) return this.interleave(res, write, (payload) => data({ id, object, model: modelName, ...payload }), answers, choice, chat, includeUsage ? usage : undefined);
    for (const [index, piece] of pieces.entries()) {
      if (behaviour.cutAfterChunks === index) return void res.socket?.destroySoon();
      if (behaviour.malformedAfterChunks === index) {
        await write('data: {"choices": [\n\n');
        return void res.end();
      }
      if (behaviour.streamErrorAfter?.chunks === index) {
        const { code, message, type } = behaviour.streamErrorAfter;
        // vLLM sends the error as a data event then [DONE]; llama.cpp sends an `error:` line.
        if (this.flavour === 'vllm') {
          await write(data(behaviour.vllmErrorStyle === 'flat' ? { object: 'error', message, type, param: null, code } : { error: { message, type, param: null, code } }));
          await write('data: [DONE]\n\n');
        } else await write(`error: ${JSON.stringify({ code, message, type })}\n\n`);
        return void res.end();
      }
      if (!(await write(data({ id, object, model: modelName, choices: [choice(piece, null)] })))) return;
    }
    if (behaviour.cutAfterChunks !== undefined && behaviour.cutAfterChunks >= pieces.length) return void res.socket?.destroySoon();
    if (this.flavour === 'vllm') {
      // vLLM: the finish chunk, then (asked for) a usage chunk with no choices.
      if (!(await write(data({ id, object, model: modelName, choices: [choice(chat ? undefined : '', finish)] })))) return;
      if (includeUsage && !(await write(data({ id, object, model: modelName, choices: [], usage })))) return;
    } else {
      // llama.cpp: usage and timings ride on the finish chunk.
      const last: Record<string, unknown> = { id, object, model: modelName, choices: [choice(chat ? undefined : '', finish)] };
      if (includeUsage) Object.assign(last, { usage, timings: { prompt_n: usage.prompt_tokens, predicted_n: usage.completion_tokens } });
      if (!(await write(data(last)))) return;
    }
    if (await write('data: [DONE]\n\n')) res.end();
  }

  /** A reply cut by max_tokens (one piece a token) or at the first stop string. */
  private cut(reply: string[], maxTokens: number, stop: unknown): { pieces: string[]; finish: 'stop' | 'length' } {
    const pieces: string[] = [];
    let finish: 'stop' | 'length' = 'stop';
    let produced = '';
    const stops = Array.isArray(stop) ? (stop as string[]) : typeof stop === 'string' ? [stop] : [];
    for (const piece of reply) {
      if (pieces.length >= maxTokens) {
        finish = 'length';
        break;
      }
      const hit = stops.map((s) => (produced + piece).indexOf(s, Math.max(0, produced.length - s.length))).find((at) => at !== -1);
      if (hit !== undefined) {
        const kept = (produced + piece).slice(produced.length, hit);
        if (kept) pieces.push(kept);
        break;
      }
      pieces.push(piece);
      produced += piece;
    }
    return { pieces, finish };
  }

  /**
   * vLLM's stream of several choices: their chunks interleaved (one piece of each choice in turn,
   * each chunk naming its choice), each choice's finish chunk as it runs out, then the usage totals.
   */
  private async interleave(
    res: http.ServerResponse,
    write: (line: string) => Promise<boolean>,
    data: (payload: Record<string, unknown>) => string,
    answers: { pieces: string[]; finish: string }[],
    choice: (text: string | undefined, finishReason: string | null, index: number) => unknown,
    chat: boolean,
    usage: Record<string, number> | undefined,
  ): Promise<void> {
    const longest = Math.max(...answers.map((answer) => answer.pieces.length));
    for (let step = 0; step <= longest; step++) {
      for (const [index, answer] of answers.entries()) {
        if (step < answer.pieces.length && !(await write(data({ choices: [choice(answer.pieces[step], null, index)] })))) return;
        if (step === answer.pieces.length && !(await write(data({ choices: [choice(chat ? undefined : '', answer.finish, index)] })))) return;
      }
    }
    if (usage && !(await write(data({ choices: [], usage })))) return;
    if (await write('data: [DONE]\n\n')) res.end();
  }

  /** vLLM's answer with tool calls: content null, tool_calls with chatcmpl-tool- ids, finish_reason tool_calls; streamed as tool_calls deltas. */
  private async callTools(res: http.ServerResponse, request: Record<string, unknown>, calls: { name: string; arguments: string[] }[], promptTokens: number, n = 1): Promise<void> {
    const ids = calls.map((_, i) => `chatcmpl-tool-loop${i}`);
    // With n, every choice makes the same calls.
    const text = this.behaviour.callText;
    const completionTokens = n * (calls.reduce((sum, call) => sum + call.arguments.length, 0) + (text ? 1 : 0));
    const usage = { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens };
    this.lastUsage = { prompt_tokens: usage.prompt_tokens, completion_tokens: usage.completion_tokens };
    const model = String(request.model);
    if (request.stream !== true) {
      const toolCalls = calls.map((call, i) => ({ id: ids[i], type: 'function', function: { name: call.name, arguments: call.arguments.join('') } }));
      const choices = Array.from({ length: n }, (_, index) => ({ index, message: { role: 'assistant', content: text ?? null, tool_calls: toolCalls }, finish_reason: 'tool_calls' }));
      return this.send(res, 200, { id: 'chatcmpl-loop', object: 'chat.completion', model, choices, usage });
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    for (let choice = 0; choice < n; choice++) {
      const chunk = (delta: unknown, finish: string | null = null) => `data: ${JSON.stringify({ id: 'chatcmpl-loop', object: 'chat.completion.chunk', model, choices: [{ index: choice, delta, finish_reason: finish }] })}\n\n`;
      res.write(chunk({ role: 'assistant', content: '' }));
      if (text) res.write(chunk({ content: text }));
      for (const [index, call] of calls.entries()) {
        res.write(chunk({ tool_calls: [{ index, id: ids[index], type: 'function', function: { name: call.name, arguments: '' } }] }));
        for (const piece of call.arguments) res.write(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }));
      }
      res.write(chunk({}, 'tool_calls'));
    }
    if ((request.stream_options as { include_usage?: unknown } | undefined)?.include_usage === true) {
      res.write(`data: ${JSON.stringify({ id: 'chatcmpl-loop', object: 'chat.completion.chunk', model, choices: [], usage })}\n\n`);
    }
    res.end('data: [DONE]\n\n');
  }

  private tokenize(res: http.ServerResponse, request: Record<string, unknown>): void {
    if (this.flavour === 'llama.cpp') {
      if (typeof request.content !== 'string') return this.send(res, 400, { error: { code: 400, message: '"content" must be provided', type: 'invalid_request_error' } });
      return this.send(res, 200, { tokens: tokenIds(request.content, request.add_special === true) });
    }
    const model = this.models.find((entry) => entry.id === request.model);
    if (!model) return this.error(res, 404, `The model \`${String(request.model)}\` does not exist.`, 'NotFoundError', 'model');
    const text = Array.isArray(request.messages) ? chatPrompt(request.messages) : typeof request.prompt === 'string' ? request.prompt : undefined;
    if (text === undefined) return this.error(res, 400, 'Either prompt or messages is required', 'BadRequestError');
    const tokens = tokenIds(text, true);
    this.send(res, 200, { count: tokens.length, max_model_len: model.contextLength, tokens, token_strs: null });
  }

  // vLLM's embeddings answer: each input's vector from loopbackEmbedding, its tokens counted as tokenize does.
  private embeddings(res: http.ServerResponse, request: Record<string, unknown>): void {
    if (!this.models.some((entry) => entry.id === request.model)) return this.error(res, 404, `The model \`${String(request.model)}\` does not exist.`, 'NotFoundError', 'model');
    const input = request.input;
    const inputs = typeof input === 'string' ? [input] : Array.isArray(input) && input.every((item) => typeof item === 'number') ? [input] : Array.isArray(input) ? input : [];
    if (inputs.length === 0) return this.error(res, 400, 'input is required', 'BadRequestError', 'input');
    const tokens = inputs.map((item) => (typeof item === 'string' ? tokenIds(item, true) : (item as number[])));
    const prompt = tokens.reduce((sum, ids) => sum + ids.length, 0);
    this.send(res, 200, {
      object: 'list',
      id: 'embd-loopback',
      created: Math.floor(Date.now() / 1000),
      model: request.model,
      data: inputs.map((item, index) => ({ object: 'embedding', index, embedding: loopbackEmbedding(item as string | number[]) })),
      usage: { prompt_tokens: prompt, total_tokens: prompt, completion_tokens: 0 },
    });
  }

  private error(res: http.ServerResponse, status: number, message: string, type = 'BadRequestError', param?: string): void {
    if (this.flavour === 'llama.cpp') return this.send(res, status, { error: { code: status, message, type: llamaType(status) } });
    const inner = { message, type, param: param ?? null, code: status };
    this.send(res, status, this.behaviour.vllmErrorStyle === 'flat' ? { object: 'error', ...inner } : { error: inner });
  }

  private send(res: http.ServerResponse, status: number, body: unknown): void {
    if (res.destroyed) return;
    const text = body === undefined ? '' : JSON.stringify(body);
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  }
}

// llama.cpp's error types by status (server-common's error_type names).
function llamaType(status: number): string {
  if (status === 404) return 'not_found_error';
  if (status === 401) return 'authentication_error';
  if (status === 503) return 'unavailable_error';
  if (status >= 500) return 'server_error';
  return 'invalid_request_error';
}

// A ChatML rendering, standing in for a model's chat template.
function chatPrompt(messages: unknown): string {
  if (!Array.isArray(messages)) return '';
  const text = (content: unknown) =>
    typeof content === 'string' ? content : Array.isArray(content) ? content.map((part: { text?: string }) => part.text ?? '<image>').join(' ') : '';
  return messages.map((message: { role?: string; content?: unknown }) => `<|im_start|>${message.role}\n${text(message.content)}<|im_end|>\n`).join('') + '<|im_start|>assistant\n';
}

/** The loopback vLLM's vector of an input: 8 values from its text's hash, unit length (what tests expect). */
export function loopbackEmbedding(input: string | number[]): number[] {
  let hash = 17;
  for (const char of typeof input === 'string' ? input : input.join(',')) hash = (hash * 31 + char.codePointAt(0)!) % 1_000_003;
  const raw = Array.from({ length: 8 }, (_, i) => Math.sin(hash + i) + 0.01 * (i + 1));
  const norm = Math.hypot(...raw);
  return raw.map((value) => value / norm);
}

// Words and punctuation, each a token whose id is a hash of its text; a BOS (id 1) when asked.
function tokenIds(text: string, bos: boolean): number[] {
  const ids = (text.match(/\w+|[^\w\s]/g) ?? []).map((piece) => {
    let hash = 7;
    for (const char of piece) hash = (hash * 31 + char.codePointAt(0)!) % 31_991;
    return hash + 3;
  });
  return bos ? [1, ...ids] : ids;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

interface WireTool {
  function?: { name?: string; parameters?: Record<string, unknown> };
}

/**
 * The calls the stand-in model makes when a test scripted none, deterministically: the named tool
 * for a named tool_choice, the first for required, and with auto the first tool whose name the
 * last message (a user's) mentions; none once a tool has answered. Arguments follow the schema.
 */
function chosenCalls(request: Record<string, unknown>): { name: string; arguments: string[] }[] {
  const tools = request.tools as WireTool[];
  const choice = request.tool_choice as string | { function?: { name?: string } } | undefined;
  const last = Array.isArray(request.messages) ? (request.messages.at(-1) as { role?: string; content?: unknown } | undefined) : undefined;
  let tool: WireTool | undefined;
  if (typeof choice === 'object') tool = tools.find((t) => t.function?.name === choice.function?.name);
  else if (choice === 'required') tool = tools[0];
  else if (last?.role === 'user') tool = tools.find((t) => typeof last.content === 'string' && t.function?.name !== undefined && last.content.includes(t.function.name));
  if (!tool?.function?.name) return [];
  const json = JSON.stringify(exampleOf(tool.function.parameters ?? { type: 'object' }));
  // Streamed in 8-character pieces, as a tool-call parser streams the arguments.
  return [{ name: tool.function.name, arguments: json.match(/[\s\S]{1,8}/g) ?? [''] }];
}

/** A value of a JSON schema: the first enum value, "loop" for strings, 1 for numbers, every property. */
function exampleOf(schema: Record<string, unknown>): unknown {
  if (Array.isArray(schema.enum)) return schema.enum[0];
  if (schema.const !== undefined) return schema.const;
  switch (schema.type) {
    case 'string':
      return 'loop';
    case 'number':
    case 'integer':
      return 1;
    case 'boolean':
      return true;
    case 'array':
      return [];
    case 'null':
      return null;
    default: {
      const properties = (schema.properties ?? {}) as Record<string, Record<string, unknown>>;
      return Object.fromEntries(Object.entries(properties).map(([key, value]) => [key, exampleOf(value)]));
    }
  }
}
