import express, { type NextFunction, type Request, type Response } from 'express';
import type { Logger } from 'pino';
import type { z } from 'zod';
import type { FinishReason, GenerationEvent, TokenLogprob, ToolCall, Usage } from '../engine/text-engine.js';
import { GenerationService, type GenerateCall } from '../generation/generation.service.js';
import type { Caller } from '../protocol/caller.js';
import type { UrlImagePolicy } from '../image-input/image-input-refused.js';
import type { InferenceRuntime } from '../inference-context.js';
import { planIncludes } from '../config/inference-config.js';
import { gatewayAnalytics } from '../analytics/analytics.wire.js';
import { imageRoutes } from '../images/image.routes.js';
import type { WireCall, WireRoute } from '../protocol/wire-route.js';
import { gatewayRecommendations } from '../recommendation/recommendation.wire.js';
import { responsesRoutes } from '../responses/responses.routes.js';
import { ResponseStore } from '../responses/response-store.js';
import { embeddingsRoutes } from '../embeddings/embeddings.routes.js';
import { CallerSlots } from './caller-slots.js';
import { errorBody, outcomeFor, sendWireError, WireError, wireErrorOf } from '../protocol/wire-error.js';
import { parseWire, tooDeep } from '../protocol/wire-body.js';
import { nestsDeeperThan } from '../../../core/json-depth.js';
import {
  chatSchema,
  completionSchema,
  guidedOf,
  inputOf,
  samplingOf,
  tokenizeSchema,
  messagesOf,
  toolUseOf,
  passthroughOf,
  logprobsOf,
  type ChatBody,
  type CompletionBody,
} from '../protocol/generation-request.js';
import { chunk, fullResponse, newCallId, newCompletion, usageChunk, type Kind } from './openai-response.js';
import { listedImageModels, listedModels } from '../protocol/model-listing.js';
import { USAGE_INTERFACE, WIRE_INTERFACES, badValueStatus, isKeyless, type WireInterface } from '../protocol/wire-interface.js';

declare module 'express-serve-static-core' {
  interface Request {
    /** The client's address on keyless interfaces, as the edge signed it. */
    clientAddress?: string;
  }
}

/** Where the subgraph serves an interface: `/openai/<interface>/v1/...`; the edge maps each public mount here. */
export const OPENAI_ROUTES_PREFIX = '/openai';

/** The subgraph path of an interface's mount. */
export function interfaceRoot(iface: WireInterface): string {
  return `${OPENAI_ROUTES_PREFIX}/${iface}`;
}

// Base64 images ride in the body: the OCR engine's 10 MiB image is 13.4 MiB as base64.
const BODY_LIMIT = '25mb';

const ALL = WIRE_INTERFACES;

/**
 * The OpenAI-compatible HTTP interfaces of the inference subgraph (Service T, Service I's text
 * endpoints, the keyless proxy and the multi-provider gateway), one route table for all four.
 * The edge authenticates, counts and relays each public mount to `/openai/<interface>`; here the
 * body is validated by the interface's rules, the call runs on the shared GenerationService, and
 * the answer is OpenAI's wire format, streamed as server-sent events when asked.
 */
export function createOpenAiRoutes(runtime: InferenceRuntime, logger: Logger) {
  const service = new GenerationService(runtime);
  const slots: Partial<Record<WireInterface, CallerSlots>> = {
    serviceI: new CallerSlots(runtime.config.interfaces.serviceI.maxParallel),
    proxy: new CallerSlots(runtime.config.interfaces.proxy.maxParallel),
  };

  const generate = (kind: Kind) => async (wire: WireCall) => {
    const { iface } = wire;
    const schema: z.ZodType<ChatBody | CompletionBody> = kind === 'chat' ? chatSchema(iface) : completionSchema(iface);
    const body = parseWire(iface, schema, wire.req.body);
    const guided = guidedOf(body);
    if (Array.isArray(guided)) throw new WireError(badValueStatus(iface), 'invalid_value', guided[1], guided[0]);
    const tools = 'messages' in body ? toolUseOf(body) : undefined;
    if (Array.isArray(tools)) throw new WireError(badValueStatus(iface), 'invalid_value', tools[1], tools[0]);
    const logprobs = logprobsOf(body);
    if (Array.isArray(logprobs)) throw new WireError(badValueStatus(iface), 'invalid_value', logprobs[1], logprobs[0]);
    const stream = body.stream === true;
    const includeUsage = stream && body.stream_options?.include_usage === true;
    const n = body.n ?? 1;
    const completion = newCompletion(kind, body.model);
    const { res } = wire;
    const send = (data: unknown) => res.write(`data: ${JSON.stringify(data)}\n\n`);
    // A stream starts once a provider has the request, as vLLM's does: headers and the role chunk
    // at once, not with the first token. Refusals before it keep their status.
    const open = () => {
      if (res.headersSent || wire.signal.aborted) return;
      res.status(200);
      res.setHeader('content-type', 'text/event-stream; charset=utf-8');
      res.setHeader('cache-control', 'no-cache');
      res.setHeader('x-accel-buffering', 'no');
      res.flushHeaders();
      if (kind === 'chat') for (let choice = 0; choice < n; choice++) send(chunk(kind, completion, { choice, role: true, text: '' }, includeUsage));
    };
    const call: GenerateCall = {
      interface: iface,
      usageInterface: USAGE_INTERFACE[iface],
      caller: wire.caller,
      ...(body.provider !== undefined ? { provider: body.provider } : {}),
      model: body.model,
      input: inputOf(body),
      sampling: samplingOf(body),
      ...(guided ? { guided } : {}),
      ...(tools ? { tools } : {}),
      ...passthroughField(body),
      ...(logprobs ? { logprobs } : {}),
      ...(n > 1 ? { choices: n } : {}),
      streamed: stream,
      signal: wire.signal,
      urlImages: URL_IMAGES[iface],
      outcomeOf: outcomeFor(iface),
      ...(stream ? { onAccepted: open } : {}),
    };
    // Headers gone: an error travels as an event (the openai SDK throws it as an APIError), then the stream ends.
    const failMidStream = (error: unknown) => {
      const answered = wireErrorOf(iface, error);
      if (answered.status >= 500) logger.warn({ err: error }, 'generation failed midway');
      send(errorBody(answered));
      res.write('data: [DONE]\n\n');
      res.end();
      return answered;
    };
    let started: Awaited<ReturnType<GenerationService['start']>>;
    try {
      started = await service.start(call);
    } catch (error) {
      // The stream is open (the provider took the request, then failed before its first token): answered in the stream.
      if (!res.headersSent || wire.signal.aborted) throw error;
      failMidStream(error);
      return;
    }
    const { run, first } = started;
    if (!stream) {
      const answers = Array.from({ length: n }, () => ({ text: '', calls: [] as ToolCall[], tokens: logprobs ? ([] as TokenLogprob[]) : undefined, finishReason: undefined as FinishReason | undefined }));
      let event: GenerationEvent = first;
      try {
        for (;;) {
          if (event.type === 'done') {
            run.finish({ status: 200, usage: event.usage });
            const done = event;
            res.json(fullResponse(kind, completion, answers.map((a) => ({ ...a, finishReason: a.finishReason ?? done.finishReason })), event.usage, event.extensions));
            return;
          }
          const answer = answers[event.choice ?? 0]!;
          if (event.type === 'delta') {
            answer.text += event.text;
            answer.tokens?.push(...(event.logprobs ?? []));
            if (event.finishReason) answer.finishReason = event.finishReason;
          }
          else if (event.type === 'tool_call') {
            const call = (answer.calls[event.index] ??= { id: event.id ?? newCallId(), name: event.name ?? '', arguments: '' });
            call.arguments += event.arguments;
          }
          const next = await run.events.next();
          if (next.done) throw new WireError(502, 'upstream_error', 'The engine ended the generation without finishing it');
          event = next.value;
        }
      } catch (error) {
        const answered = wireErrorOf(iface, error);
        run.finish({ status: wire.signal.aborted ? 499 : answered.status, errorCode: wire.signal.aborted ? 'client_closed' : answered.code });
        throw answered;
      }
    }

    open();
    let usage: Usage | null = null;
    // Per choice: the tool calls begun, completions' text_offset (from the start of its text), whether it finished.
    const begun = Array.from({ length: n }, () => new Set<number>());
    const offsets = new Array<number>(n).fill(0);
    const finished = new Set<number>();
    try {
      let event: GenerationEvent = first;
      for (;;) {
        if (event.type === 'done') {
          usage = event.usage;
          for (let choice = 0; choice < n; choice++) if (!finished.has(choice)) send(chunk(kind, completion, { choice, finishReason: event.finishReason }, includeUsage));
          if (includeUsage) send(usageChunk(kind, completion, event.usage, event.extensions));
          res.write('data: [DONE]\n\n');
          res.end();
          run.finish({ status: 200, usage });
          return;
        }
        const choice = event.choice ?? 0;
        if (event.type === 'delta') {
          if (event.text) {
            send(chunk(kind, completion, { choice, text: event.text, ...(logprobs ? { logprobs: { tokens: event.logprobs ?? [], offset: offsets[choice]! } } : {}) }, includeUsage));
            offsets[choice]! += event.text.length;
          }
          if (event.finishReason) {
            finished.add(choice);
            send(chunk(kind, completion, { choice, finishReason: event.finishReason }, includeUsage));
          }
        }
        else if (event.type === 'tool_call') {
          // A call's first delta carries its id and name, whatever the engine's first piece held.
          const first = !begun[choice]!.has(event.index);
          begun[choice]!.add(event.index);
          const piece = first ? { index: event.index, id: event.id ?? newCallId(), name: event.name ?? '', arguments: event.arguments } : { index: event.index, arguments: event.arguments };
          send(chunk(kind, completion, { choice, toolCall: piece }, includeUsage));
        }
        const next = await run.events.next();
        if (next.done) throw new WireError(502, 'upstream_error', 'The engine ended the generation without finishing it');
        event = next.value;
      }
    } catch (error) {
      if (wire.signal.aborted) {
        run.finish({ status: 499, errorCode: 'client_closed', usage });
        (wire.req.log ?? logger).info({ path: wire.req.path }, 'the client closed the connection during the answer');
        return;
      }
      const answered = failMidStream(error);
      run.finish({ status: answered.status, errorCode: answered.code, usage });
    }
  };

  /** The interface's model list entries, text and image models (GET /v1/models and /v1/models/{id}). */
  const modelList = async (iface: WireInterface, caller: Caller, { provider, onlyPlan = false }: { provider?: string; onlyPlan?: boolean }) => {
    const plan = service.planFor(caller);
    const planConfig = plan === undefined ? undefined : runtime.config.plans.find((p) => p.id === plan);
    const prefer = iface === 'gateway' ? runtime.config.interfaces.gateway.defaultProvider : undefined;
    const [models, images] = await Promise.all([service.models({ interface: iface, provider, ...(onlyPlan ? { plan } : {}) }), service.imageModels({ interface: iface, provider })]);
    return [
      ...listedModels(models, {
        prefer,
        urlImages: URL_IMAGES[iface] === 'accept' ? true : URL_IMAGES[iface] === 'refuse' ? false : 'per-model',
        ...(planConfig ? { onPlan: (m) => planIncludes(planConfig, m.provider, m.id) } : {}),
      }),
      ...listedImageModels(images, prefer),
    ];
  };

  const routes: WireRoute[] = [
    { method: 'POST', path: '/v1/chat/completions', interfaces: ALL, summary: 'Chat completion, text and vision (OpenAI wire format; stream: true for server-sent events)', handle: generate('chat') },
    { method: 'POST', path: '/v1/completions', interfaces: ALL, summary: 'Raw text completion (OpenAI wire format; stream: true for server-sent events)', handle: generate('completion') },
    {
      method: 'POST',
      path: '/v1/tokenize',
      interfaces: ALL,
      summary: 'Token count of a prompt or of chat messages (and tools) with the model chat template: {count, max_model_len, tokens}',
      handle: async ({ iface, req, res, caller }) => {
        const body = parseWire(iface, tokenizeSchema, req.body);
        if (body.provider !== undefined && iface !== 'gateway') throw new WireError(400, 'unknown_parameter', 'Unrecognized request argument supplied: provider', 'provider');
        if ((body.messages === undefined) === (body.prompt === undefined)) {
          throw new WireError(400, 'missing_parameter', body.messages ? 'Give either messages or prompt, not both' : "Missing required parameter: 'messages' or 'prompt'", body.messages ? 'prompt' : 'messages');
        }
        if (body.tools && !body.messages) throw new WireError(badValueStatus(iface), 'invalid_value', 'tools are rendered by the chat template: give them with messages, not prompt', 'tools');
        const tools = body.tools ? toolUseOf({ model: body.model, messages: body.messages!, tools: body.tools }) : undefined;
        if (Array.isArray(tools)) throw new WireError(badValueStatus(iface), 'invalid_value', tools[1], tools[0]);
        const result = await service.tokenize({
          interface: iface,
          usageInterface: USAGE_INTERFACE[iface],
          caller,
          ...(body.provider !== undefined ? { provider: body.provider } : {}),
          model: body.model,
          input: body.messages ? { kind: 'chat', messages: messagesOf(body.messages) } : { kind: 'completion', prompt: body.prompt! },
          ...(tools ? { tools: tools.definitions } : {}),
          outcomeOf: outcomeFor(iface),
        });
        res.json({ count: result.count, max_model_len: result.maxModelLen, tokens: result.tokens });
      },
    },
    {
      method: 'GET',
      path: '/v1/models',
      interfaces: ALL,
      summary: 'Models (OpenAI list); gateway: ?provider= filters (provider_d_image: the image models only), image models included; Service T and I: ?available_on_current_plan=1 lists the key plan only',
      handle: async ({ iface, req, res, caller }) => {
        const query = req.query;
        let provider: string | undefined;
        let onlyPlan = false;
        for (const name of Object.keys(query)) {
          if (name === 'provider' && iface === 'gateway') continue;
          if (name === 'available_on_current_plan' && !isKeyless(iface)) continue;
          throw new WireError(400, 'unknown_parameter', `Unrecognized query parameter: ${name}`, name);
        }
        if (query.provider !== undefined) {
          if (typeof query.provider !== 'string' || !query.provider) throw new WireError(badValueStatus(iface), 'invalid_provider', 'provider must be one provider id', 'provider');
          provider = query.provider;
        }
        if (query.available_on_current_plan !== undefined) {
          if (query.available_on_current_plan !== '0' && query.available_on_current_plan !== '1') {
            throw new WireError(badValueStatus(iface), 'invalid_value', 'available_on_current_plan must be 0 (all models) or 1 (the models on your plan)', 'available_on_current_plan');
          }
          onlyPlan = query.available_on_current_plan === '1';
        }
        res.json({ object: 'list', data: await modelList(iface, caller, { provider, onlyPlan }) });
      },
    },
    {
      method: 'GET',
      // A wildcard: a model id may hold a slash (org/model), sent as %2F or as is.
      path: '/v1/models/*id',
      interfaces: ALL,
      summary: "One model's entry of /v1/models (the openai client's models.retrieve); 404 model_not_found for an id this interface does not serve",
      handle: async ({ iface, req, res, caller }) => {
        const segments = (req.params as { id?: string | string[] }).id;
        const id = Array.isArray(segments) ? segments.join('/') : String(segments ?? '');
        for (const name of Object.keys(req.query)) throw new WireError(400, 'unknown_parameter', `Unrecognized query parameter: ${name}`, name);
        const entry = (await modelList(iface, caller, {})).find((m) => m.id === id);
        if (!entry) throw new WireError(404, 'model_not_found', `The model '${id}' does not exist or is not served on this interface`, 'model');
        res.json(entry);
      },
    },
    ...responsesRoutes(service, logger, URL_IMAGES, new ResponseStore(runtime.orm, runtime.config.responses)),
    ...embeddingsRoutes(service),
    {
      method: 'GET',
      path: '/v1/health',
      interfaces: ['gateway'],
      summary: 'Health: 200 while any provider answers, 503 when none does',
      handle: async ({ res }) => {
        const reports = runtime.registry.status();
        const up = reports.filter((r) => r.status !== 'down');
        const status = up.length === 0 ? 'down' : up.length === reports.length && up.every((r) => r.status === 'operational') ? 'ok' : 'degraded';
        res.status(up.length ? 200 : 503).json({ status, providers: Object.fromEntries(reports.map((r) => [r.id, r.status])) });
      },
    },
    {
      method: 'GET',
      path: '/v1/status',
      interfaces: ['gateway'],
      summary: 'Live provider status: health-probe status, requests in flight, concurrency limit, model count, cooldown',
      handle: async ({ res }) => {
        res.json({
          object: 'list',
          data: runtime.registry.status().map((r) => ({
            id: r.id,
            name: r.name,
            status: r.status,
            in_flight: r.inFlight,
            max_concurrency: r.maxConcurrency,
            models: r.models,
            cooling_down_until: r.coolingDownUntil?.toISOString() ?? null,
            engines: r.engines.map((e) => ({ type: e.type, available: e.available, ok: e.ok, ...(e.detail ? { detail: e.detail } : {}) })),
          })),
        });
      },
    },
    {
      method: 'GET',
      path: '/v1/routes',
      interfaces: ['gateway'],
      summary: 'Every endpoint of the gateway, from its route table',
      handle: async ({ res }) => {
        res.json({ object: 'list', data: routes.filter((r) => r.interfaces.includes('gateway')).map((r) => ({ method: r.method, path: listedPath(r.path), summary: r.summary })) });
      },
    },
    {
      method: 'GET',
      path: '/v1/analytics',
      interfaces: ['gateway'],
      summary: 'Usage statistics and model performance of every call, call history of your client address: ?from, to, provider, model, interface, bucket, section, limit, after',
      handle: async ({ req, res, caller }) => void res.json(await gatewayAnalytics(runtime, req.query, caller)),
    },
    {
      method: 'GET',
      path: '/v1/recommendations',
      interfaces: ['gateway'],
      summary: 'Best model per task, with why: ?category= chat, coding, vision, ocr, image, upscale or fast-text (all without one)',
      handle: async ({ req, res }) => void res.json(await gatewayRecommendations(runtime, req.query)),
    },
    ...imageRoutes(runtime, (iface, caller) => {
      const limited = slots[iface];
      return limited ? { limit: limited.limit, inUse: limited.count(subjectOf(caller)) } : null;
    }),
  ];

  const router = express.Router();
  const jsonBody = new Map<string, express.RequestHandler>();
  const bodyOf = (limit: string) => {
    let parser = jsonBody.get(limit);
    if (!parser) jsonBody.set(limit, (parser = express.json({ limit, type: () => true })));
    return parser;
  };
  // Every JSON body, as it is parsed: nothing walks one nested past JSON_MAX_DEPTH (see wire-body.ts).
  const boundedDepth = (req: Request, res: Response, next: NextFunction) => {
    if (!nestsDeeperThan(req.body, runtime.jsonMaxDepth)) return next();
    sendWireError(res, tooDeep(runtime.jsonMaxDepth));
  };
  for (const iface of WIRE_INTERFACES) {
    for (const route of routes.filter((r) => r.interfaces.includes(iface))) {
      const handler = async (req: Request, res: Response, next: NextFunction) => {
        const controller = new AbortController();
        res.once('close', () => {
          if (!res.writableFinished) controller.abort(new Error('The client closed the connection'));
        });
        const caller: Caller = req.principal ? { principal: req.principal } : { address: req.clientAddress ?? 'unknown' };
        const limited = slots[iface];
        const subject = subjectOf(caller);
        const release = limited?.tryAcquire(subject);
        if (limited && !release) {
          return sendWireError(res, new WireError(429, 'too_many_parallel_requests', `At most ${limited.limit} requests may run in parallel for this ${caller.principal ? 'key' : 'client address'}; wait for one to finish`, null, 1));
        }
        res.once('close', () => release?.());
        try {
          await route.handle({ iface, req, res, caller, signal: controller.signal });
        } catch (error) {
          release?.();
          // The client went away: nothing failed on our side, and there is no one to answer.
          if (controller.signal.aborted) {
            (req.log ?? logger).info({ path: route.path }, 'the client closed the connection before the answer');
            return void res.end();
          }
          if (res.headersSent) return void res.end();
          const answered = wireErrorOf(iface, error);
          if (answered.status === 500) next(error);
          else sendWireError(res, answered);
        }
      };
      const path = `${interfaceRoot(iface)}${route.path}`;
      // Multipart bodies (images/edits) are read by their handler; JSON ones here, within the route's limit.
      const parsers = route.multipart ? [] : [bodyOf(route.bodyLimit ?? BODY_LIMIT), boundedDepth];
      if (route.method === 'GET') router.get(path, ...parsers, handler);
      else if (route.method === 'DELETE') router.delete(path, ...parsers, handler);
      else router.post(path, ...parsers, handler);
    }
  }
  // Anything else under an interface: OpenAI's 404 for an unknown URL (a known path with another method included).
  router.use(OPENAI_ROUTES_PREFIX, (req, res) => {
    sendWireError(res, new WireError(404, 'unknown_url', `Invalid URL (${req.method} ${req.originalUrl.replace(/^\/openai\/[^/]+/, '').split('?')[0]})`));
  });
  router.use(OPENAI_ROUTES_PREFIX, (error: Error & { status?: number; type?: string }, req: Request, res: Response, next: NextFunction) => {
    if (res.headersSent) return next(error);
    if (error.type === 'entity.parse.failed') return sendWireError(res, new WireError(400, 'invalid_json', `The request body is not valid JSON: ${error.message}`));
    if (error.type === 'entity.too.large') {
      const limit = (error as { limit?: number }).limit;
      return sendWireError(res, new WireError(413, 'payload_too_large', `The request body is larger than ${limit ? `${Math.floor(limit / 1024 / 1024)} MB` : BODY_LIMIT}`));
    }
    if (error.status && error.status >= 400 && error.status < 500) return sendWireError(res, new WireError(400, 'invalid_body', error.message));
    req.log?.error({ err: error }, 'inference request failed');
    sendWireError(res, new WireError(500, 'internal_error', 'An internal error occurred'));
  });
  return { router, routes, service };
}

/** The spec's image-input table: Service T takes URLs, the gateway base64 only, Service I and its proxy as the model is listed. */
const URL_IMAGES: Record<WireInterface, UrlImagePolicy> = {
  serviceT: 'accept',
  serviceI: 'per-model',
  proxy: 'per-model',
  gateway: 'refuse',
};

/** A route's path as /v1/routes lists it: Express's parameters (`:id`, `*id`) written `{id}`, as OpenAPI writes them. */
function listedPath(path: string): string {
  return path.replace(/[:*](\w+)/g, '{$1}');
}

/** Whose parallel requests a call counts against: its key, or its client address on keyless interfaces. */
function subjectOf(caller: Caller): string {
  return caller.principal ? `key:${caller.principal.keyId}` : `ip:${caller.address}`;
}

function passthroughField(body: ChatBody | CompletionBody): { passthrough?: Record<string, unknown> } {
  const passthrough = passthroughOf(body);
  return passthrough ? { passthrough } : {};
}
