import { planIncludes } from '../config/inference-config.js';
import { EngineError, type GenerationEvent, type Usage } from '../engine/text-engine.js';
import type { InferenceRuntime } from '../inference-context.js';
import { listedModels } from '../protocol/model-listing.js';
import { UsageInterface } from '../usage/usage-interface.js';
import { Completion } from './completion.js';
import { CompletionChunk } from './completion-chunk.js';
import type { FinishReason } from './finish-reason.js';
import { generationErrorOf, outcomeOf } from './generation.errors.js';
import type { GenerationRequest } from './generation.request.js';
import { GenerationService, type GenerateCall, type GenerationRun } from './generation.service.js';
import type { Caller } from '../protocol/caller.js';
import { InferenceModel } from './inference-model.js';
import type { ModelStatus } from './model-status.js';
import { TokenCount } from './token-count.js';
import { TokenUsage } from './token-usage.js';

/** A streamed chunk, or the error that ended the stream (the subscription answers it as that event's error). */
export type StreamItem = { chunk: CompletionChunk } | { error: unknown };

// A GraphQL mutation has no signal for a client that went away (the gateway's HTTP fetch to the
// subgraph outlives it); the generation timeout GenerationService adds still bounds the call.
const NOT_ABORTED = new AbortController().signal;

/**
 * Inference for GraphQL callers, over the shared GenerationService. GraphQL callers are keyed, so
 * they get the gateway interface's providers (every configured one) with the plan check of the
 * keyed interfaces: a text or image key's own plan, or the default plan. Admin keys carry no plan
 * and are held to the default plan too, rather than let through: planOf never lets a keyed call
 * skip the check, and an operator who needs more issues a text key on a wider plan.
 */
export class GraphqlGeneration {
  private readonly service: GenerationService;

  constructor(
    private readonly runtime: InferenceRuntime,
    private readonly caller: Caller,
  ) {
    this.service = new GenerationService(runtime);
  }

  /** The gateway's models (of one provider when named), each marked by whether the caller's plan has it. */
  async models(provider: string | undefined): Promise<InferenceModel[]> {
    const planId = this.service.planFor(this.caller);
    const plan = this.runtime.config.plans.find((entry) => entry.id === planId);
    try {
      const models = await this.service.models({ interface: 'gateway', ...(provider !== undefined ? { provider } : {}) });
      const listed = listedModels(models, {
        prefer: this.runtime.config.interfaces.gateway.defaultProvider,
        urlImages: false,
        onPlan: (model) => plan !== undefined && planIncludes(plan, model.provider, model.id),
      });
      return listed.map((model) =>
        Object.assign(new InferenceModel(), {
          id: model.id,
          provider: model.owned_by,
          providers: model.providers,
          contextLength: model.context_length,
          inputModalities: model.input_modalities,
          status: model.status as ModelStatus,
          aliasOf: model.alias_of ?? null,
          onPlan: model.available_on_current_plan ?? false,
        }),
      );
    } catch (error) {
      throw generationErrorOf(error);
    }
  }

  /** Runs a generation to its end and answers the whole text, recording its usage. */
  async complete(request: GenerationRequest): Promise<Completion> {
    const { run, first } = await this.start(request, false, NOT_ABORTED);
    let text = '';
    let event: GenerationEvent = first;
    try {
      for (;;) {
        if (event.type === 'done') {
          run.finish({ status: 200, usage: event.usage });
          return Object.assign(new Completion(), { text, finishReason: event.finishReason as FinishReason, usage: TokenUsage.of(event.usage), model: run.model, provider: run.provider });
        }
        if (event.type === 'delta') text += event.text;
        event = await nextEvent(run);
      }
    } catch (error) {
      const outcome = outcomeOf(error);
      run.finish({ status: outcome.status, errorCode: outcome.code });
      throw generationErrorOf(error);
    }
  }

  /**
   * A generation's chunks as an iterator whose `return()` (the subscriber went away) aborts the
   * engine at once. The iterator is returned before the generation starts: graphql-ws returns an
   * operation the client completed only once `subscribe` has resolved, so a subscribe that waited
   * for the first token would keep a departed subscriber's generation running until then. A
   * refusal is therefore the stream's one event. An async generator's own return() would wait for
   * the token it is awaiting; GraphQL's subscription mapping calls this return() directly.
   */
  stream(request: GenerationRequest): AsyncIterableIterator<StreamItem> {
    const controller = new AbortController();
    const start = () => this.start(request, true, controller.signal);
    const items = (async function* (): AsyncGenerator<StreamItem> {
      let started: { run: GenerationRun; first: GenerationEvent };
      try {
        started = await start();
      } catch (error) {
        if (controller.signal.aborted) return;
        yield { error };
        return;
      }
      yield* chunks(started.run, started.first, controller.signal);
    })();
    const iterator: AsyncIterableIterator<StreamItem> = {
      next: () => items.next(),
      return: async () => {
        controller.abort(new Error('The subscriber went away'));
        return items.return(undefined);
      },
      throw: async (error: unknown) => {
        controller.abort(error);
        return items.return(undefined);
      },
      [Symbol.asyncIterator]: () => iterator,
    };
    return iterator;
  }

  /** Counts the tokens of a prompt or of chat messages on the best provider serving the model. */
  async tokenize(request: Omit<GenerationRequest, 'sampling' | 'guided'>): Promise<TokenCount> {
    try {
      const result = await this.service.tokenize({ interface: 'gateway', usageInterface: UsageInterface.GRAPHQL, caller: this.caller, ...request, outcomeOf });
      return Object.assign(new TokenCount(), { count: result.count, maxModelLen: result.maxModelLen, tokens: result.tokens, model: request.model, provider: result.provider });
    } catch (error) {
      throw generationErrorOf(error);
    }
  }

  private async start(request: GenerationRequest, streamed: boolean, signal: AbortSignal): Promise<{ run: GenerationRun; first: GenerationEvent }> {
    const call: GenerateCall = {
      interface: 'gateway',
      usageInterface: UsageInterface.GRAPHQL,
      caller: this.caller,
      ...request,
      streamed,
      signal,
      // As the gateway interface: images as base64 data URIs only, never fetched from a URL.
      urlImages: 'refuse',
      outcomeOf,
    };
    try {
      return await this.service.start(call);
    } catch (error) {
      throw generationErrorOf(error);
    }
  }
}

async function nextEvent(run: GenerationRun): Promise<GenerationEvent> {
  const next = await run.events.next();
  if (next.done) throw new EngineError('upstream_error', 'The engine ended the generation without finishing it');
  return next.value;
}

/** The chunks of a started generation; records its usage however it ends (499 client_closed when the subscriber left). */
async function* chunks(run: GenerationRun, first: GenerationEvent, signal: AbortSignal): AsyncGenerator<StreamItem> {
  let event: GenerationEvent = first;
  let usage: Usage | null = null;
  try {
    for (;;) {
      if (event.type === 'done') {
        usage = event.usage;
        run.finish({ status: 200, usage });
        yield { chunk: Object.assign(new CompletionChunk(), { text: '', finishReason: event.finishReason as FinishReason, usage: TokenUsage.of(event.usage) }) };
        return;
      }
      if (event.type === 'delta' && event.text) yield { chunk: Object.assign(new CompletionChunk(), { text: event.text, finishReason: null, usage: null }) };
      event = await nextEvent(run);
    }
  } catch (error) {
    if (signal.aborted) return;
    const outcome = outcomeOf(error);
    run.finish({ status: outcome.status, errorCode: outcome.code, usage });
    // An error thrown out of a subscription's iterator would reach graphql-ws unmasked, as a
    // protocol error that ends the operation; as an event it is masked like any field error.
    yield { error: generationErrorOf(error) };
  } finally {
    // Left before the end (the subscriber unsubscribed or disconnected): finish records once, so a
    // finished or failed generation keeps its record.
    run.finish({ status: 499, errorCode: 'client_closed', usage });
    await run.events.return(undefined);
  }
}
