import { randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import type { Logger } from 'pino';
import { Readable } from 'node:stream';
import { Pool, type Dispatcher } from 'undici';
import type {
  ImageEngine,
  ImageGenerationResponse,
  ImageProgress,
  Img2ImgRequest,
  Sampler,
  SdModel,
  Txt2ImgRequest,
  Upscaler,
  UpscaleRequest,
  UpscaleResponse,
} from '../../engine/image-engine.js';
import { collectGeneration, ImageEngineError, isEmbeddedUpscaler, type ImageGenerationStream } from '../../engine/image-engine.js';
import { readGeneration } from './generation-reader.js';
import type { EngineHealth } from '../../engine/text-engine.js';
import { imageEngineErrorFor, imageEngineErrorForConnection, isRecord, readSdWebuiFailure, type SdWebuiOperation } from './sd-webui-errors.js';

export interface SdWebuiTimeouts {
  /** Opening the TCP (and TLS) connection. */
  connectMs: number;
  /** A txt2img, img2img or upscale, from sending it to the answer's last byte (the spec's 300 s). */
  generationMs: number;
  /** Listings, options, progress and health probes (the spec's 30 s). */
  listingMs: number;
}

export interface SdWebuiEngineOptions {
  /** The WebUI's root, e.g. http://gpu-2:7860 (user:password@ in it is sent as basic auth, the WebUI's --api-auth). */
  baseUrl: string;
  timeouts?: Partial<SdWebuiTimeouts>;
  /** Keep-alive connections kept open to the upstream (it runs one job at a time; the rest wait in its queue). */
  connections?: number;
  /** How long the listings that requests are checked against (checkpoints, upscalers) are reused. */
  checkpointCacheMs?: number;
  /** How often an abandoned job still queued upstream is looked at, to interrupt it once it starts. */
  abandonedPollMs?: number;
  /** How long an abandoned job the upstream does not know yet (its body still being read) is looked for. */
  abandonedGraceMs?: number;
  /** Where upstream failures are logged with the upstream's own words. */
  logger?: Logger;
}

export const DEFAULT_SD_WEBUI_TIMEOUTS: SdWebuiTimeouts = { connectMs: 5_000, generationMs: 300_000, listingMs: 30_000 };

interface Exchange {
  method: 'GET' | 'POST';
  path: string;
  body?: unknown;
  timeoutMs: number;
  signal?: AbortSignal;
  operation: SdWebuiOperation;
  names?: { checkpoint?: string; upscaler?: string };
}

/**
 * An ImageEngine over a Stable-Diffusion-WebUI server (AUTOMATIC1111's API, also served by Forge
 * and SD.Next): requests go as the WebUI reads them, answers come back in its shapes, failures
 * become ImageEngineErrors of our own wording. The WebUI runs one job at a time, so a request the
 * caller abandons (or that times out) is interrupted upstream rather than left to run.
 */
export class SdWebuiEngine implements ImageEngine {
  readonly kind = 'sd-webui' as const;
  private readonly pool: Pool;
  private readonly prefix: string;
  private readonly authorization?: string;
  private readonly timeouts: SdWebuiTimeouts;
  private listing?: { at: number; checkpoints: Promise<SdModel[]> };
  private upscalerListing?: { at: number; upscalers: Promise<Upscaler[]> };
  private readonly inFlight = new Set<AbortController>();
  private readonly stopping = new Set<Promise<void>>();
  private readonly closing = new AbortController();

  constructor(private readonly config: SdWebuiEngineOptions) {
    const url = new URL(config.baseUrl);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ImageEngineError('invalid_request', 'The sd-webui base URL must be http or https');
    if (url.username) this.authorization = `Basic ${Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString('base64')}`;
    this.prefix = url.pathname.replace(/\/+$/, '');
    this.timeouts = { ...DEFAULT_SD_WEBUI_TIMEOUTS, ...config.timeouts };
    this.pool = new Pool(url.origin, {
      connections: config.connections ?? 16,
      connect: { timeout: this.timeouts.connectMs },
      // Our own timers decide (they tell a timeout from the caller's abort); these are a backstop.
      headersTimeout: this.timeouts.generationMs + 5_000,
      bodyTimeout: this.timeouts.generationMs + 5_000,
    });
  }

  async models(): Promise<string[]> {
    return (await this.checkpoints()).map((model) => model.model_name);
  }

  async checkpoints(): Promise<SdModel[]> {
    const answer = await this.list('/sdapi/v1/sd-models');
    const models: SdModel[] = [];
    for (const entry of answer) {
      if (!isRecord(entry) || typeof entry.title !== 'string' || typeof entry.model_name !== 'string') throw this.malformed('The image engine listed its checkpoints in an unknown shape');
      models.push({
        title: entry.title,
        model_name: entry.model_name,
        hash: stringOrNull(entry.hash),
        sha256: stringOrNull(entry.sha256),
        filename: typeof entry.filename === 'string' ? entry.filename : '',
        config: stringOrNull(entry.config),
      });
    }
    return models;
  }

  async samplers(): Promise<Sampler[]> {
    const answer = await this.list('/sdapi/v1/samplers');
    return answer.map((entry) => {
      if (!isRecord(entry) || typeof entry.name !== 'string') throw this.malformed('The image engine listed its samplers in an unknown shape');
      return {
        name: entry.name,
        aliases: Array.isArray(entry.aliases) ? entry.aliases.filter((alias): alias is string => typeof alias === 'string') : [],
        options: isRecord(entry.options) ? entry.options : {},
      };
    });
  }

  async upscalers(): Promise<Upscaler[]> {
    const answer = await this.list('/sdapi/v1/upscalers');
    return answer.map((entry) => {
      if (!isRecord(entry) || typeof entry.name !== 'string') throw this.malformed('The image engine listed its upscalers in an unknown shape');
      return {
        name: entry.name,
        ...(typeof entry.scale === 'number' ? { scale: entry.scale } : {}),
        neural: !isEmbeddedUpscaler(entry.name),
        servedBy: 'sd-webui' as const,
      };
    });
  }

  async options(): Promise<Record<string, unknown>> {
    const answer = await this.exchange({ method: 'GET', path: '/sdapi/v1/options', timeoutMs: this.timeouts.listingMs, operation: 'listing' });
    if (!isRecord(answer)) throw this.malformed('The image engine answered its options in an unknown shape');
    return answer;
  }

  async progress(): Promise<ImageProgress> {
    const answer = await this.exchange({ method: 'GET', path: '/sdapi/v1/progress?skip_current_image=true', timeoutMs: this.timeouts.listingMs, operation: 'listing' });
    if (!isRecord(answer) || typeof answer.progress !== 'number') throw this.malformed('The image engine answered its progress in an unknown shape');
    return {
      progress: answer.progress,
      eta_relative: typeof answer.eta_relative === 'number' ? answer.eta_relative : 0,
      state: isRecord(answer.state) ? answer.state : {},
      current_image: typeof answer.current_image === 'string' ? answer.current_image : null,
      textinfo: typeof answer.textinfo === 'string' ? answer.textinfo : null,
    };
  }

  async health(): Promise<EngineHealth> {
    try {
      const models = await this.checkpoints();
      return models.length > 0 ? { ok: true } : { ok: false, detail: 'The image engine lists no checkpoints' };
    } catch (error) {
      if (error instanceof ImageEngineError) return { ok: false, detail: error.message };
      throw error;
    }
  }

  async txt2img(request: Txt2ImgRequest, signal: AbortSignal): Promise<ImageGenerationResponse> {
    return collectGeneration(await this.generate('txt2img', request, signal));
  }

  async img2img(request: Img2ImgRequest, signal: AbortSignal): Promise<ImageGenerationResponse> {
    return collectGeneration(await this.generate('img2img', request, signal));
  }

  async upscale(request: UpscaleRequest, signal: AbortSignal): Promise<UpscaleResponse> {
    // A name the WebUI does not list fails there in a shape each fork words its own way: checked first.
    await this.upscaler(request.upscaler_1 ?? 'None', 'upscaler_1');
    if ((request.extras_upscaler_2_visibility ?? 0) > 0) await this.upscaler(request.upscaler_2 ?? 'None', 'upscaler_2');
    // Extras run outside the WebUI's interruptible job state: an abandoned upscale is only closed.
    const answer = await this.exchange({
      method: 'POST',
      path: '/sdapi/v1/extra-single-image',
      body: request,
      timeoutMs: this.timeouts.generationMs,
      signal,
      operation: 'upscale',
      names: { upscaler: request.upscaler_1 ?? 'None' },
    });
    if (!isRecord(answer) || typeof answer.image !== 'string' || answer.image === '') throw this.malformed('The image engine answered the upscale in an unknown shape');
    return { image: answer.image, html_info: typeof answer.html_info === 'string' ? answer.html_info : '' };
  }

  async close(): Promise<void> {
    this.closing.abort();
    for (const controller of this.inFlight) controller.abort(new ImageEngineError('unavailable', 'The image engine is closing'));
    await Promise.all(this.stopping);
    if (!this.pool.closed) await this.pool.close();
  }

  async generate(operation: 'txt2img' | 'img2img', request: Txt2ImgRequest | Img2ImgRequest, signal: AbortSignal): Promise<ImageGenerationStream> {
    if (operation === 'img2img' && (!Array.isArray((request as Img2ImgRequest).init_images) || (request as Img2ImgRequest).init_images.length === 0))
      throw new ImageEngineError('invalid_request', 'init_images needs at least one image', 'init_images');
    const { sd_model_checkpoint: named, ...rest } = request;
    const overridden = request.override_settings?.sd_model_checkpoint;
    if (overridden !== undefined && typeof overridden !== 'string') throw new ImageEngineError('invalid_request', 'override_settings.sd_model_checkpoint must be a string', 'override_settings');
    if (named !== undefined && overridden !== undefined && named !== overridden)
      throw new ImageEngineError('invalid_request', 'sd_model_checkpoint and override_settings.sd_model_checkpoint name different checkpoints', 'sd_model_checkpoint');
    const wanted = named ?? overridden;
    // The WebUI loads a fallback checkpoint for a name it does not know: check the name first.
    const checkpoint = wanted === undefined ? undefined : await this.checkpoint(wanted);
    // force_task_id lets an abandoned job be found in the WebUI's queue (/internal/progress).
    const taskId = `task(${randomUUID()})`;
    const body = {
      ...rest,
      ...(checkpoint ? { override_settings: { ...request.override_settings, sd_model_checkpoint: checkpoint.title } } : {}),
      force_task_id: taskId,
    };
    const state = { expired: false };
    let opened: Opened;
    try {
      opened = await this.open({ method: 'POST', path: `/sdapi/v1/${operation}`, body, timeoutMs: this.timeouts.generationMs, signal, operation, names: { checkpoint: wanted }, state });
    } catch (error) {
      if (signal.aborted || state.expired) this.stopJob(taskId);
      throw error;
    }
    const stopJob = () => this.stopJob(taskId);
    return (async function* (): ImageGenerationStream {
      let ended = false;
      try {
        for await (const event of readGeneration(opened.body)) {
          // The whole answer is read once its end is: a reader that stops there has not left early.
          if (event.type === 'done') ended = true;
          yield event;
        }
      } catch (error) {
        throw opened.failure(error);
      } finally {
        opened.close();
        // Left early (the caller went away), aborted or out of time: the WebUI's job may still run.
        if (!ended) stopJob();
      }
    })();
  }

  private async checkpoint(name: string): Promise<SdModel> {
    const now = Date.now();
    if (!this.listing || now - this.listing.at >= (this.config.checkpointCacheMs ?? 10_000)) {
      const checkpoints = this.checkpoints();
      this.listing = { at: now, checkpoints };
      checkpoints.catch(() => {
        if (this.listing?.checkpoints === checkpoints) this.listing = undefined;
      });
    }
    const found = (await this.listing.checkpoints).find(
      (model) =>
        model.title === name ||
        model.model_name === name ||
        model.title.replace(/ \[[0-9a-f]+\]$/i, '') === name ||
        model.hash === name ||
        model.sha256 === name ||
        model.filename.split(/[\\/]/).pop() === name,
    );
    if (!found) throw new ImageEngineError('model_not_found', `No checkpoint "${name}" on the image engine`, 'sd_model_checkpoint');
    return found;
  }

  private async upscaler(name: string, param: string): Promise<void> {
    const now = Date.now();
    if (!this.upscalerListing || now - this.upscalerListing.at >= (this.config.checkpointCacheMs ?? 10_000)) {
      const upscalers = this.upscalers();
      this.upscalerListing = { at: now, upscalers };
      upscalers.catch(() => {
        if (this.upscalerListing?.upscalers === upscalers) this.upscalerListing = undefined;
      });
    }
    if (!(await this.upscalerListing.upscalers).some((upscaler) => upscaler.name === name))
      throw new ImageEngineError('not_available', `No upscaler "${name}" on the image engine`, param);
  }

  // Interrupts the job of an abandoned request once the WebUI runs it: /sdapi/v1/interrupt stops
  // whatever job is current, so a job still queued behind another caller's is waited for, not
  // interrupted early. A WebUI without /internal/progress (--nowebui has none) cannot say where the
  // job is: it is interrupted at once.
  private stopJob(taskId: string): void {
    const run = (async () => {
      const started = Date.now();
      const deadline = started + this.timeouts.generationMs;
      while (!this.closing.signal.aborted && Date.now() < deadline) {
        let job: Record<string, unknown> | undefined;
        try {
          const answer = await this.exchange({ method: 'POST', path: '/internal/progress', body: { id_task: taskId, id_live_preview: -1 }, timeoutMs: this.timeouts.listingMs, operation: 'listing' });
          job = isRecord(answer) && typeof answer.active === 'boolean' ? answer : undefined;
        } catch {
          job = undefined;
        }
        if (this.closing.signal.aborted) return;
        if (!job || job.active === true) {
          await this.exchange({ method: 'POST', path: '/sdapi/v1/interrupt', timeoutMs: this.timeouts.listingMs, operation: 'listing' });
          this.config.logger?.info({ taskId }, 'interrupted the image job of an abandoned request');
          return;
        }
        if (job.completed === true) return;
        // The WebUI registers a task once it has read the body: not yet known is not yet gone, for a while.
        if (job.queued !== true && Date.now() - started >= (this.config.abandonedGraceMs ?? 2_000)) return;
        await delay(this.config.abandonedPollMs ?? 500, undefined, { signal: this.closing.signal }).catch(() => undefined);
      }
    })().catch((error: unknown) => this.config.logger?.warn({ err: error, taskId }, 'could not interrupt the image job of an abandoned request'));
    this.stopping.add(run);
    void run.finally(() => this.stopping.delete(run));
  }

  private async list(path: string): Promise<unknown[]> {
    const answer = await this.exchange({ method: 'GET', path, timeoutMs: this.timeouts.listingMs, operation: 'listing' });
    if (!Array.isArray(answer)) throw this.malformed('The image engine answered a listing in an unknown shape');
    return answer;
  }

  private malformed(message: string): ImageEngineError {
    return new ImageEngineError('upstream_error', message);
  }

  // One request, answer read and parsed, under its deadline and the caller's signal.
  private async exchange(exchange: Exchange & { state?: { expired: boolean } }): Promise<unknown> {
    const opened = await this.open(exchange);
    try {
      let text: string;
      try {
        text = await opened.body.text();
      } catch (error) {
        throw opened.failure(error);
      }
      try {
        return text === '' ? undefined : JSON.parse(text);
      } catch {
        throw this.malformed('The image engine answered with malformed JSON');
      }
    } finally {
      opened.close();
    }
  }

  /**
   * Sends one request under its deadline and the caller's signal and answers its 2xx body to be
   * read; a refusal's body is read and thrown as our error. The deadline and the signal keep
   * holding until `close`, so a body read slowly still times out and still stops on abort.
   */
  private async open(exchange: Exchange & { state?: { expired: boolean } }): Promise<Opened> {
    const { signal } = exchange;
    const state = exchange.state ?? { expired: false };
    const controller = new AbortController();
    const timer = setTimeout(() => {
      state.expired = true;
      controller.abort(new ImageEngineError('timeout', 'The image engine did not answer in time'));
    }, exchange.timeoutMs);
    const onAbort = () => controller.abort(signal?.reason);
    if (signal?.aborted) controller.abort(signal.reason);
    else signal?.addEventListener('abort', onAbort, { once: true });
    this.inFlight.add(controller);
    let phase: 'connect' | 'answer' = 'connect';
    const close = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      this.inFlight.delete(controller);
    };
    const failure = (error: unknown): unknown => {
      if (error instanceof ImageEngineError) return error;
      if (signal?.aborted) return signal.reason;
      const reason: unknown = controller.signal.reason;
      if (controller.signal.aborted && reason instanceof ImageEngineError) return reason;
      this.config.logger?.warn({ route: exchange.path, err: error }, 'image engine connection failed');
      return imageEngineErrorForConnection(error, phase);
    };
    try {
      const headers: Record<string, string> = { accept: 'application/json' };
      if (exchange.body !== undefined) headers['content-type'] = 'application/json';
      if (this.authorization) headers.authorization = this.authorization;
      const response = await this.pool.request({
        method: exchange.method,
        path: this.prefix + exchange.path,
        headers,
        // Piece by piece: a request carrying images is not turned into one more whole copy of itself.
        body: exchange.body === undefined ? undefined : Readable.from(jsonPieces(exchange.body)),
        signal: controller.signal,
      });
      phase = 'answer';
      if (response.statusCode >= 200 && response.statusCode < 300) return { body: response.body, close, failure };
      const text = await response.body.text();
      let parsed: unknown;
      try {
        parsed = text === '' ? undefined : JSON.parse(text);
      } catch {
        parsed = undefined;
      }
      const failed = readSdWebuiFailure(response.statusCode, parsed);
      this.config.logger?.warn(
        { route: exchange.path, status: failed.status, field: failed.field, error: failed.error, detail: failed.detail, errors: failed.errors?.slice(0, 500) },
        'image engine refused',
      );
      throw imageEngineErrorFor(failed, exchange.operation, exchange.names);
    } catch (error) {
      close();
      throw failure(error);
    }
  }
}

/** An answer being read: its body, the cleanup once read, and how a failure while reading it is told. */
interface Opened {
  body: Dispatcher.ResponseData['body'];
  close(): void;
  failure(error: unknown): unknown;
}

/**
 * JSON text of a request body in pieces: each long string (an image) is its own piece, so the
 * request is never one more string the size of all its images together.
 */
function* jsonPieces(value: unknown): Generator<string> {
  if (Array.isArray(value)) {
    yield '[';
    for (let i = 0; i < value.length; i++) {
      if (i) yield ',';
      yield* jsonPieces(value[i] === undefined ? null : value[i]);
    }
    yield ']';
  } else if (value && typeof value === 'object' && !(value instanceof Date)) {
    yield '{';
    let first = true;
    for (const [key, entry] of Object.entries(value)) {
      if (entry === undefined || typeof entry === 'function') continue;
      yield `${first ? '' : ','}${JSON.stringify(key)}:`;
      first = false;
      yield* jsonPieces(entry);
    }
    yield '}';
  } else yield JSON.stringify(value) ?? 'null';
}

function stringOrNull(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}
