import type { Capability } from '../config/inference-config.schema.js';
import {
  EngineError,
  type EmbeddingResult,
  type FinishReason,
  type GenerationEvent,
  type GenerationInput,
  type GenerationRequest,
  type Guided,
  type SamplingParams,
  type TextEngine,
  type TokenizeResult,
  type ToolDefinition,
  type ToolUse,
  type Usage,
} from '../engine/text-engine.js';
import type { InferenceRuntime } from '../inference-context.js';
import type { ProviderTarget } from '../provider-registry/provider-registry.js';
import { ImageInputRefused, type UrlImagePolicy } from '../image-input/image-input-refused.js';
import type { ImageModel, InterfaceName, ProviderModel } from '../provider-registry/provider-registry.js';
import type { UsageInterface } from '../usage/usage-interface.js';
import { planOf } from '../../../core/principal.js';
import type { Caller } from '../protocol/caller.js';
import { AttemptLog } from './attempt-log.js';
import { ProviderRefusal } from '../provider-registry/provider-refusal.js';

export interface GenerateCall {
  /** Which interface's providers serve the call (GraphQL uses the gateway's). */
  interface: InterfaceName;
  /** How the call is recorded. */
  usageInterface: UsageInterface;
  caller: Caller;
  provider?: string;
  model: string;
  input: GenerationInput;
  sampling: SamplingParams;
  guided?: Guided;
  /** Functions the model may call; only models whose engine can call tools serve such a call. */
  tools?: ToolUse;
  /** vLLM's own parameters, verbatim; engines that cannot take them refuse them by name. */
  passthrough?: Record<string, unknown>;
  /** Per-token log probabilities with `top` alternatives. */
  logprobs?: { top: number };
  /** How many choices (OpenAI's `n`); absent or 1: one, whose events carry no choice. */
  choices?: number;
  streamed: boolean;
  /** The client's: aborted when it goes away. The generation timeout is added here. */
  signal: AbortSignal;
  /** Whether images may come by URL (the spec's image-input table). */
  urlImages: UrlImagePolicy;
  /** How the interface answers an error (its table's status and code), for the usage record. */
  outcomeOf: OutcomeOf;
  /**
   * Called once the call is under way on a provider: when its engine has accepted the request (an
   * upstream answered with its stream), at the latest with the first event. A refusal before it
   * is still an error status; a streamed answer may send its headers from here on.
   */
  onAccepted?: () => void;
}

/** The status and error code an interface answers an error with. */
export type OutcomeOf = (error: unknown) => { status: number; code: string };

/** Calls in flight whose records are written when they end. */
export interface GenerationRun {
  model: string;
  provider: string;
  /** The events after the first, which has already arrived (failover happens before it). */
  events: AsyncGenerator<GenerationEvent>;
  /**
   * Records the call's usage and closes `events` (releasing the provider's slot): call once, when
   * the answer has ended (status as answered, error code when it failed midway).
   */
  finish(outcome: { status: number; errorCode?: string | null; usage?: Usage | null }): void;
}

/** The capability a generation needs: vision when a message carries an image. */
export function capabilityOf(input: GenerationInput): Capability {
  if (input.kind === 'completion') return 'completion';
  return input.messages.some((m) => Array.isArray(m.content) && m.content.some((part) => part.type === 'image_url')) ? 'vision' : 'chat';
}

/** Time limit expired: the engine was stopped, and the call answers 503 (the spec's table has no 504). */
function timedOut(ms: number): EngineError {
  return new EngineError('timeout', `The generation did not finish within ${Math.round(ms / 1000)} s`);
}

/**
 * Generation, token counting and model listing over the provider registry, for every interface
 * (the OpenAI-compatible HTTP ones and GraphQL): resolves the model on the interface's providers
 * and the caller's plan, runs it with the generation timeout, and records every call's usage.
 */
export class GenerationService {
  constructor(private readonly runtime: InferenceRuntime) {}

  /** The caller's plan on a keyed call; keyless interfaces have none. */
  planFor(caller: Caller): string | undefined {
    return caller.principal ? planOf(caller.principal, this.runtime.config.defaultPlan) : undefined;
  }

  /**
   * Starts a generation and waits for its first event, so that a refusal or a provider failure
   * (retried once on another provider) is still an error status, not a broken stream. Throws
   * ProviderRefusal or EngineError; records refused calls too.
   */
  async start(call: GenerateCall): Promise<{ run: GenerationRun; first: GenerationEvent }> {
    const startedAt = performance.now();
    const occurredAt = new Date();
    const limitMs = this.runtime.config.timeouts.generationMs;
    const timeout = AbortSignal.timeout(limitMs);
    const signal = AbortSignal.any([call.signal, timeout]);
    const attempts = new AttemptLog(this.runtime, call, call.provider ?? '');
    let firstTokenAt: number | null = null;
    let recorded = false;
    const record = (status: number, errorCode: string | null, usage: Usage | null | undefined) => {
      if (recorded) return;
      recorded = true;
      this.runtime.usage.record({
        ...attempts.who(),
        provider: attempts.provider,
        model: call.model,
        promptTokens: usage?.promptTokens ?? 0,
        completionTokens: usage?.completionTokens ?? 0,
        latencyMs: performance.now() - startedAt,
        timeToFirstTokenMs: firstTokenAt === null ? null : firstTokenAt - startedAt,
        streamed: call.streamed,
        status,
        errorCode,
        occurredAt,
      });
    };
    let accepted = false;
    const accept = () => {
      if (accepted) return;
      accepted = true;
      call.onAccepted?.();
    };
    try {
      const resolution = await this.runtime.registry.resolve({
        interface: call.interface,
        provider: call.provider,
        model: call.model,
        plan: this.planFor(call.caller),
        capability: capabilityOf(call.input),
      });
      const events = this.runtime.registry.generate(
        withChoices(withImagePolicy(withTools(resolution.targets, call.model, call.input, call.tools !== undefined), call.input, call.urlImages), call.choices ?? 1),
        {
          input: call.input,
          sampling: call.sampling,
          guided: call.guided,
          ...(call.tools ? { tools: call.tools } : {}),
          ...(call.passthrough ? { passthrough: call.passthrough } : {}),
          ...(call.logprobs ? { logprobs: call.logprobs } : {}),
          ...((call.choices ?? 1) > 1 ? { choices: call.choices } : {}),
          signal,
          onAccepted: accept,
        },
        undefined,
        attempts.hooks,
      );
      const first = await events.next().catch((error: unknown) => {
        throw timeout.aborted && !call.signal.aborted ? timedOut(limitMs) : error;
      });
      if (first.done) throw new EngineError('upstream_error', 'The engine ended the generation without an answer');
      firstTokenAt = performance.now();
      accept();
      const guarded = async function* (): AsyncGenerator<GenerationEvent> {
        try {
          for (;;) {
            const next = await events.next();
            if (next.done) return;
            yield next.value;
          }
        } catch (error) {
          throw timeout.aborted && !call.signal.aborted ? timedOut(limitMs) : error;
        } finally {
          await events.return(undefined);
        }
      };
      const rest = guarded();
      return {
        first: first.value,
        run: {
          model: resolution.model,
          provider: attempts.provider,
          events: rest,
          finish: ({ status, errorCode, usage }) => {
            record(status, errorCode ?? null, usage);
            // The interface stops reading at the done event: closing the events releases the provider's slot.
            // When the first event was already the done event (an empty answer), `rest` never started, and
            // returning an unstarted generator skips its finally: close the engine's events directly too.
            void rest
              .return(undefined)
              .then(() => events.return(undefined))
              .catch(() => undefined);
          },
        },
      };
    } catch (error) {
      // A client gone before the first token is not a failure of ours: 499, as nginx logs it.
      const outcome = call.signal.aborted ? { status: 499, code: 'client_closed' } : call.outcomeOf(error);
      record(outcome.status, outcome.code, null);
      throw error;
    }
  }

  /** Counts the tokens of a prompt or of chat messages (with the model's chat template) on the best provider serving the model. */
  async tokenize(call: { interface: InterfaceName; usageInterface: UsageInterface; caller: Caller; provider?: string; model: string; input: GenerationInput; tools?: ToolDefinition[]; outcomeOf: OutcomeOf }): Promise<TokenizeResult & { provider: string }> {
    const startedAt = performance.now();
    const attempts = new AttemptLog(this.runtime, { ...call, streamed: false }, call.provider ?? '');
    let status = 200;
    let errorCode: string | null = null;
    let count = 0;
    try {
      const resolution = await this.runtime.registry.resolve({ interface: call.interface, provider: call.provider, model: call.model, plan: this.planFor(call.caller), capability: 'tokenize' });
      // Tools are counted only where a model can call them, as chat serves them.
      const targets = call.tools ? withTools(resolution.targets, call.model, call.input, true) : resolution.targets;
      const { value, slot } = await this.runtime.registry.withFailover(targets, (target) => target.engine.tokenize(target.engineModel, call.input, call.tools), undefined, attempts.hooks);
      slot.release();
      count = value.count;
      return { ...value, provider: attempts.provider };
    } catch (error) {
      ({ status, code: errorCode } = call.outcomeOf(error));
      throw error;
    } finally {
      this.recordPromptOnly(attempts, call.model, count, startedAt, status, errorCode);
    }
  }

  /**
   * Embeds inputs on the best provider whose model embeds (failover and the generation timeout
   * as for chat); a model that cannot embed is capability_not_served. Records the call's usage.
   */
  async embed(call: { interface: InterfaceName; usageInterface: UsageInterface; caller: Caller; provider?: string; model: string; inputs: (string | number[])[]; dimensions?: number; signal: AbortSignal; outcomeOf: OutcomeOf }): Promise<EmbeddingResult & { model: string; provider: string }> {
    const startedAt = performance.now();
    const limitMs = this.runtime.config.timeouts.generationMs;
    const timeout = AbortSignal.timeout(limitMs);
    const signal = AbortSignal.any([call.signal, timeout]);
    const attempts = new AttemptLog(this.runtime, { ...call, streamed: false }, call.provider ?? '');
    let status = 200;
    let errorCode: string | null = null;
    let promptTokens = 0;
    try {
      const resolution = await this.runtime.registry.resolve({ interface: call.interface, provider: call.provider, model: call.model, plan: this.planFor(call.caller) });
      const able = resolution.targets.filter((target) => target.model.model.embeddings === true && target.engine.embed !== undefined);
      if (able.length === 0) throw new ProviderRefusal('capability_not_served', `Model "${call.model}" does not embed: its engine (${resolution.targets[0]?.engine.kind ?? 'none'}) serves no embeddings`, 'model');
      const { value, slot } = await this.runtime.registry.withFailover(
        able,
        (target) => target.engine.embed!({ model: target.engineModel, inputs: call.inputs, ...(call.dimensions !== undefined ? { dimensions: call.dimensions } : {}), signal }),
        signal,
        attempts.hooks,
      );
      slot.release();
      promptTokens = value.promptTokens;
      return { ...value, model: resolution.model, provider: attempts.provider };
    } catch (error) {
      const failed = timeout.aborted && !call.signal.aborted ? timedOut(limitMs) : error;
      ({ status, code: errorCode } = call.signal.aborted ? { status: 499, code: 'client_closed' } : call.outcomeOf(failed));
      throw failed;
    } finally {
      this.recordPromptOnly(attempts, call.model, promptTokens, startedAt, status, errorCode);
    }
  }

  /** The usage record of a call that generates nothing (tokenize, embeddings): prompt tokens only, never streamed. */
  private recordPromptOnly(attempts: AttemptLog, model: string, promptTokens: number, startedAt: number, status: number, errorCode: string | null): void {
    this.runtime.usage.record({
      ...attempts.who(),
      provider: attempts.provider,
      model,
      promptTokens,
      completionTokens: 0,
      latencyMs: performance.now() - startedAt,
      timeToFirstTokenMs: null,
      streamed: false,
      status,
      errorCode,
    });
  }

  /** The models an interface lists (of one provider when named), within the listing timeout. */
  models(request: { interface: InterfaceName; provider?: string; plan?: string }): Promise<ProviderModel[]> {
    return this.withinListingTime(this.runtime.registry.listModels(request));
  }

  /** The image models an interface lists (the gateway's: the WebUI checkpoints of its image providers), within the listing timeout. */
  imageModels(request: { interface: InterfaceName; provider?: string }): Promise<ImageModel[]> {
    return this.withinListingTime(this.runtime.registry.listImageModels(request));
  }

  private async withinListingTime<T>(listing: Promise<T>): Promise<T> {
    const ms = this.runtime.config.timeouts.listingMs;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new EngineError('timeout', `The model listing did not finish within ${Math.round(ms / 1000)} s`)), ms);
    });
    try {
      return await Promise.race([listing, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }
}

/** The first image URL of a chat's messages, as `messages[i].content[j].image_url.url`. */
function firstImageUrl(input: GenerationInput): string | undefined {
  if (input.kind !== 'chat') return undefined;
  for (const [i, message] of input.messages.entries()) {
    if (!Array.isArray(message.content)) continue;
    for (const [j, part] of message.content.entries()) {
      if (part.type === 'image_url' && !/^data:/i.test(part.image_url.url)) return `messages[${i}].content[${j}].image_url.url`;
    }
  }
  return undefined;
}

/** The targets that may take the input's image URLs under the interface's policy, or a refusal. */
function withImagePolicy(targets: ProviderTarget[], input: GenerationInput, policy: UrlImagePolicy): ProviderTarget[] {
  const param = firstImageUrl(input);
  if (!param || policy === 'accept') return targets;
  if (policy === 'refuse') throw new ImageInputRefused('This interface takes images as base64 data URIs only (data:<mime>;base64,<data>), not as URLs', param);
  const taking = targets.filter((target) => target.model.model.urlImageInput);
  if (taking.length === 0) throw new ImageInputRefused(`Model "${targets[0]?.model.id}" takes images as base64 data URIs only, not as URLs`, param);
  return taking;
}

/**
 * The targets whose model can call tools when the call has tools or a conversation with tool
 * calls and tool turns: a model that cannot says so, never answers as if there were none.
 */
function withTools(targets: ProviderTarget[], model: string, input: GenerationInput, offersTools: boolean): ProviderTarget[] {
  const turn = input.kind === 'chat' ? input.messages.findIndex((m) => m.role === 'tool' || (m.toolCalls?.length ?? 0) > 0) : -1;
  if (!offersTools && turn < 0) return targets;
  const able = targets.filter((target) => target.model.model.tools === true);
  if (able.length > 0) return able;
  const what = offersTools ? 'cannot call tools: leave out tools, or give tool_choice "none"' : 'cannot call tools, so it takes no tool calls or tool results in the conversation';
  throw new EngineError('unsupported_parameter', `Model '${model}' ${what}`, offersTools ? 'tools' : `messages[${turn}]`);
}

/**
 * The targets for `n` choices: an engine that generates them natively takes the request as is, one
 * that gives only one refuses, and any other runs it once per choice (repeatedChoices).
 */
function withChoices(targets: ProviderTarget[], n: number): ProviderTarget[] {
  if (n <= 1) return targets;
  const able = targets.filter((target) => target.engine.choices !== 'one');
  if (able.length === 0) {
    const kind = targets[0]?.engine.kind ?? 'none';
    throw new EngineError('unsupported_parameter', `n > 1 is not supported by the ${kind} engine: its answer is deterministic, so every choice would be the same`, 'n');
  }
  return able.map((target) => (target.engine.choices === 'native' ? target : { ...target, engine: repeating(target.engine) }));
}

/** The engine with its generate() giving a request's choices one after another (the rest of it as is). */
function repeating(engine: TextEngine): TextEngine {
  const wrapped = Object.create(engine) as TextEngine;
  wrapped.generate = (request) => repeatedChoices(engine, request);
  return wrapped;
}

/**
 * A request's `choices` as that many generations in a row on one engine (its slot held throughout):
 * choice 0's events, then choice 1's, each ending with a delta carrying its finish reason. With a
 * seed, choice i samples with seed + i, so the choices differ yet repeat. The prompt is counted
 * once, the completions summed, as OpenAI and vLLM count them.
 */
async function* repeatedChoices(engine: TextEngine, request: GenerationRequest): AsyncGenerator<GenerationEvent> {
  const { choices = 1, ...one } = request;
  const seed = request.sampling.seed;
  let promptTokens = 0;
  let completionTokens = 0;
  let first: FinishReason | undefined;
  let extensions: Record<string, unknown> | undefined;
  for (let choice = 0; choice < choices; choice++) {
    const sampling = seed === undefined ? one.sampling : { ...one.sampling, seed: (seed + choice) % 2 ** 32 };
    for await (const event of engine.generate({ ...one, sampling })) {
      if (event.type !== 'done') {
        yield { ...event, choice };
        continue;
      }
      if (choice === 0) {
        promptTokens = event.usage.promptTokens;
        first = event.finishReason;
        extensions = event.extensions;
      }
      completionTokens += event.usage.completionTokens;
      yield { type: 'delta', text: '', choice, finishReason: event.finishReason };
    }
  }
  yield { type: 'done', finishReason: first ?? 'stop', usage: { promptTokens, completionTokens }, ...(extensions ? { extensions } : {}) };
}
