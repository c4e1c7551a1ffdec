import { access } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import Tesseract from 'tesseract.js';
import {
  EngineError,
  type ChatMessage,
  type EngineHealth,
  type EngineModel,
  type FinishReason,
  type GenerationEvent,
  type GenerationInput,
  type GenerationRequest,
  GUIDED_PARAMS,
  SAMPLING_PARAMS,
  type GuidedParam,
  type SamplingParam,
  type TextEngine,
  type TokenizeResult,
} from '../../engine/text-engine.js';
import { guardedImageFetcher, type ImageFetcher, type PrivateImageUrls } from '../../image-input/image-fetcher.js';
import type { ImageFormat } from '../../image-input/image-format.js';
import { OCR_DEFAULTS } from './ocr-defaults.js';
import { readImageInput } from '../../image-input/image-input.js';
import { OcrWorkerPool } from '../../../shared/ocr-worker-pool.js';
import { traineddataProblem } from '../../../shared/traineddata-check.js';

/** The one model this engine serves: Tesseract's English LSTM model. */
export const OCR_MODEL_ID = 'ocr-eng';

export interface OcrEngineOptions {
  /** Largest image accepted, decoded, from a data URI or a URL (default 10 MiB). */
  maxImageBytes?: number;
  imageFetchTimeoutMs?: number;
  /** Image URLs may name loopback and private addresses: all (development and tests), or those in the listed networks. */
  allowPrivateImageUrls?: PrivateImageUrls;
  /** How image URLs are read; defaults to the SSRF-guarded fetcher. */
  fetcher?: ImageFetcher;
  /** Tesseract workers (threads) at most, each reading one image at a time (default 1). */
  workers?: number;
  /** The folder holding eng.traineddata.gz; defaults to @tesseract.js-data/eng's LSTM model. */
  languagePath?: string;
}

/**
 * The English data package ships two models: 4.0.0 (legacy and LSTM, 11 MB) and 4.0.0_best_int
 * (LSTM only, 3 MB). Tesseract.js runs the LSTM engine by default, so the smaller one serves.
 */
function packagedLanguagePath(): string {
  const require = createRequire(import.meta.url);
  return path.join(path.dirname(require.resolve('@tesseract.js-data/eng/package.json')), '4.0.0_best_int');
}

// Sampling has no meaning for a recogniser; maxTokens (recognised words), stop and seed (it is
// deterministic) are honoured, everything else is refused rather than ignored.
const HONOURED: ReadonlySet<SamplingParam> = new Set(['maxTokens', 'stop', 'seed']);
const UNSUPPORTED = new Set<SamplingParam | GuidedParam>([...SAMPLING_PARAMS.filter((param) => !HONOURED.has(param)), ...GUIDED_PARAMS]);

interface ImageReading {
  format: ImageFormat;
  bytes: number;
  confidence: number;
}

/**
 * The embedded OCR vision model: a chat whose last user message carries images is answered with
 * the text Tesseract reads from them. It cannot chat, complete a prompt or count tokens, and
 * refuses those rather than invent an answer.
 */
export class OcrEngine implements TextEngine {
  readonly kind = 'ocr' as const;
  // One reading per image: the model reads deterministically, so n copies of it would mean nothing.
  readonly choices = 'one' as const;
  readonly unsupported: ReadonlySet<SamplingParam | 'guided_json' | 'guided_regex' | 'guided_choice'> = UNSUPPORTED;
  private readonly languagePath: string;
  private readonly maxImageBytes: number;
  private readonly imageFetchTimeoutMs: number;
  private readonly fetcher: ImageFetcher;
  private readonly pool: OcrWorkerPool;
  private loadError: string | undefined;
  private closed = false;

  constructor(options: OcrEngineOptions = {}) {
    this.languagePath = options.languagePath ?? packagedLanguagePath();
    this.maxImageBytes = options.maxImageBytes ?? OCR_DEFAULTS.maxImageBytes;
    this.imageFetchTimeoutMs = options.imageFetchTimeoutMs ?? OCR_DEFAULTS.imageFetchTimeoutMs;
    this.fetcher = options.fetcher ?? guardedImageFetcher(options.allowPrivateImageUrls ?? false);
    this.pool = new OcrWorkerPool(() => this.createWorker(), options.workers ?? OCR_DEFAULTS.workers);
  }

  async models(): Promise<EngineModel[]> {
    const problem = await this.problem();
    return [
      {
        id: OCR_MODEL_ID,
        // It reads images, not a token sequence: there is no text context to fill.
        contextLength: 0,
        inputModalities: ['text', 'image'],
        urlImageInput: true,
        status: problem ? 'failed' : this.pool.loading ? 'loading' : 'ready',
        ...(problem ? { error: problem } : {}),
      },
    ];
  }

  async *generate(request: GenerationRequest): AsyncGenerator<GenerationEvent> {
    this.checkModel(request.model);
    if (this.closed) throw new EngineError('unavailable', 'The OCR engine is closed');
    for (const [name, value] of Object.entries(request.sampling)) {
      if (value !== undefined && UNSUPPORTED.has(name as SamplingParam)) {
        throw new EngineError('unsupported_parameter', `${name} is not supported by the ocr engine`, name);
      }
    }
    if (request.guided) throw new EngineError('unsupported_parameter', `guided_${request.guided.kind} is not supported by the ocr engine`, `guided_${request.guided.kind}`);
    const vllmOwn = Object.keys(request.passthrough ?? {})[0];
    if (vllmOwn !== undefined) throw new EngineError('unsupported_parameter', `${vllmOwn} is not supported by the ocr engine`, vllmOwn);
    if (request.logprobs) throw new EngineError('unsupported_parameter', 'logprobs is not supported by the ocr engine', 'logprobs');
    if (request.tools) throw new EngineError('unsupported_parameter', 'tools are not supported: the OCR model cannot call tools', 'tools');
    const images = imageParts(request.input);
    const { maxTokens, stop = [] } = request.sampling;

    // Every image is fetched and read before the first delta, so that a bad image is refused
    // while the interface can still answer with an error status instead of a cut stream.
    const inputs = [];
    for (const image of images) {
      inputs.push(await readImageInput(image.url, image.param, { maxBytes: this.maxImageBytes, fetchTimeoutMs: this.imageFetchTimeoutMs, fetcher: this.fetcher, signal: request.signal }));
    }
    const readings: ImageReading[] = [];
    const texts: string[] = [];
    for (const [index, input] of inputs.entries()) {
      const page = await this.recognize(input.bytes, images[index].param, request.signal);
      readings.push({ format: input.format, bytes: input.bytes.length, confidence: page.confidence });
      texts.push(page.text.trim());
    }

    let answer = texts.join('\n\n');
    let finishReason: FinishReason = 'stop';
    const stopAt = firstStop(answer, stop);
    if (stopAt !== undefined) answer = answer.slice(0, stopAt);
    if (maxTokens !== undefined && countWords(answer) > maxTokens) {
      answer = answer.slice(0, endOfWord(answer, maxTokens));
      finishReason = 'length';
    }
    // One delta per image, each image's text preceded by the blank line that separates it.
    let from = 0;
    let end = 0;
    for (const [index, text] of texts.entries()) {
      end += (index > 0 ? 2 : 0) + text.length;
      const to = Math.min(answer.length, end);
      if (to > from) yield { type: 'delta', text: answer.slice(from, to) };
      from = to;
    }
    yield {
      type: 'done',
      finishReason,
      // No text goes in (the model reads pixels); what comes out is counted in recognised words.
      usage: { promptTokens: 0, completionTokens: countWords(answer) },
      extensions: { ocr: { confidence: readings.reduce((sum, r) => sum + r.confidence, 0) / readings.length, images: readings } },
    };
  }

  async tokenize(model: string, _input: GenerationInput): Promise<TokenizeResult> {
    this.checkModel(model);
    throw new EngineError('invalid_request', `${OCR_MODEL_ID} is an OCR model and has no tokenizer: it cannot count tokens`, 'model');
  }

  async health(): Promise<EngineHealth> {
    const problem = await this.problem();
    if (this.closed) return { ok: false, detail: 'closed' };
    return problem ? { ok: false, detail: problem } : { ok: true, detail: this.pool.started ? 'model loaded' : 'model loads on first use' };
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.pool.close();
  }

  private checkModel(model: string): void {
    if (model !== OCR_MODEL_ID) throw new EngineError('model_not_found', `The ocr engine has no model "${model}"; it serves ${OCR_MODEL_ID}`, 'model');
  }

  private async problem(): Promise<string | undefined> {
    return (await this.missingLanguageFile()) ?? this.loadError;
  }

  private async missingLanguageFile(): Promise<string | undefined> {
    try {
      await access(path.join(this.languagePath, 'eng.traineddata.gz'));
      return undefined;
    } catch {
      return `The English model eng.traineddata.gz is missing from ${this.languagePath}`;
    }
  }

  private async createWorker(): Promise<Tesseract.Worker> {
    // tesseract.js never settles createWorker when the language data cannot be read (its
    // rejection is swallowed), and a bad file later crashes it: both are caught before loading,
    // and any other failure while loading through the error handler, which hears of every failed job.
    const missing = await this.missingLanguageFile();
    if (missing) throw new EngineError('unavailable', missing);
    const unsound = await traineddataProblem(path.join(this.languagePath, 'eng.traineddata.gz'));
    if (unsound) {
      this.loadError = `Tesseract could not load the English model: ${unsound}`;
      throw new EngineError('unavailable', this.loadError);
    }
    let failLoad: (error: unknown) => void = () => {};
    const loadFailed = new Promise<never>((_, reject) => (failLoad = reject));
    let loaded = false;
    try {
      const worker = await Promise.race([
        Tesseract.createWorker('eng', Tesseract.OEM.LSTM_ONLY, {
          // A local folder, so nothing is fetched from the CDN tesseract.js defaults to.
          langPath: this.languagePath,
          gzip: true,
          // 'none': no eng.traineddata copy is read from or written to the working directory.
          cacheMethod: 'none',
          // Without a handler tesseract.js throws a failed job's error from an event listener,
          // which would end the process; the job's own promise still rejects.
          errorHandler: (error: unknown) => {
            if (!loaded) failLoad(error);
          },
        }),
        loadFailed,
      ]);
      loaded = true;
      this.loadError = undefined;
      return worker;
    } catch (error) {
      this.loadError = `Tesseract could not load the English model: ${String(error).replace(/^Error: /, '')}`;
      throw new EngineError('unavailable', this.loadError);
    }
  }

  private async recognize(bytes: Buffer, param: string, signal: AbortSignal): Promise<{ text: string; confidence: number }> {
    let worker: Tesseract.Worker;
    try {
      worker = await this.pool.acquire(signal);
    } catch (error) {
      if (signal.aborted) throw signal.reason;
      if (error instanceof EngineError) throw error;
      throw new EngineError('unavailable', error instanceof Error ? error.message : String(error));
    }
    let onAbort = (): void => {};
    const aborted = new Promise<never>((_, reject) => {
      onAbort = () => reject(signal.reason);
      signal.addEventListener('abort', onAbort, { once: true });
    });
    try {
      const result = await Promise.race([worker.recognize(bytes), aborted]);
      this.pool.release(worker);
      return { text: result.data.text, confidence: result.data.confidence };
    } catch (error) {
      // Tesseract cannot stop a recognition: the worker goes, and the next request gets a new one.
      if (signal.aborted) {
        this.pool.discard(worker);
        throw signal.reason;
      }
      // A file whose signature is an image's but whose body Leptonica cannot decode; the worker is fine.
      this.pool.release(worker);
      throw new EngineError('invalid_request', `The image could not be decoded (${String(error).replace(/^Error: /, '')})`, param);
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
  }
}

/** The image parts of the last user message, each with the parameter path that names it. */
function imageParts(input: GenerationInput): { url: string; param: string }[] {
  if (input.kind === 'completion') {
    throw new EngineError('invalid_request', `${OCR_MODEL_ID} is an OCR model: it reads text from images in chat messages and cannot complete a prompt`, 'prompt');
  }
  const messages: ChatMessage[] = input.messages;
  let last = -1;
  messages.forEach((m, i) => {
    if (m.role === 'user') last = i;
  });
  const content = last >= 0 ? messages[last].content : '';
  const parts = !Array.isArray(content) ? [] : content.flatMap((part, p) => (part.type === 'image_url' ? [{ url: part.image_url.url, param: `messages[${last}].content[${p}].image_url.url` }] : []));
  if (!parts.length) {
    throw new EngineError('invalid_request', `${OCR_MODEL_ID} is an OCR model: the last user message must carry at least one image to read; it cannot chat`, 'messages');
  }
  return parts;
}

function countWords(text: string): number {
  return text.match(/\S+/g)?.length ?? 0;
}

/** Where the `count`-th word of `text` ends. */
function endOfWord(text: string, count: number): number {
  if (count <= 0) return 0;
  let seen = 0;
  for (const match of text.matchAll(/\S+/g)) {
    if (++seen === count) return match.index + match[0].length;
  }
  return text.length;
}

function firstStop(text: string, stops: string[]): number | undefined {
  let first: number | undefined;
  for (const stop of stops) {
    if (!stop) continue;
    const at = text.indexOf(stop);
    if (at >= 0 && (first === undefined || at < first)) first = at;
  }
  return first;
}
