import { access } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import Tesseract from 'tesseract.js';
import { OcrWorkerPool } from '../../shared/ocr-worker-pool.js';
import { traineddataProblem } from '../../shared/traineddata-check.js';
import { ExtractionFailure } from './extraction-failure.js';

/** The English LSTM model shipped in @tesseract.js-data/eng: nothing is downloaded at run time. */
function packagedLanguagePath(): string {
  const require = createRequire(import.meta.url);
  return path.join(path.dirname(require.resolve('@tesseract.js-data/eng/package.json')), '4.0.0_best_int');
}

export interface OcrReading {
  text: string;
  /** Tesseract's mean word confidence, 0 to 1. */
  confidence: number;
}

/**
 * Tesseract for documents, on the inference engine's worker pool (generic: it knows only
 * tesseract.js). Workers start on first use; a recognition whose signal aborts loses its worker,
 * since Tesseract cannot stop one in progress.
 */
export class DocumentOcr {
  private readonly pool: OcrWorkerPool;
  private readonly languagePath = packagedLanguagePath();

  constructor(workers = 1) {
    this.pool = new OcrWorkerPool(() => this.createWorker(), Math.max(1, workers));
  }

  async recognize(png: Buffer, signal: AbortSignal): Promise<OcrReading> {
    const worker = await this.pool.acquire(signal);
    let onAbort = (): void => {};
    const aborted = new Promise<never>((_, reject) => {
      onAbort = () => reject(signal.reason);
      signal.addEventListener('abort', onAbort, { once: true });
    });
    try {
      const result = await Promise.race([worker.recognize(png), aborted]);
      this.pool.release(worker);
      return { text: result.data.text, confidence: Math.max(0, Math.min(1, result.data.confidence / 100)) };
    } catch (error) {
      if (signal.aborted) {
        this.pool.discard(worker);
        throw signal.reason;
      }
      this.pool.release(worker);
      throw new ExtractionFailure('corrupt', `The image could not be read (${String(error).replace(/^Error: /, '')})`);
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
  }

  close(): Promise<void> {
    return this.pool.close();
  }

  private async createWorker(): Promise<Tesseract.Worker> {
    const file = path.join(this.languagePath, 'eng.traineddata.gz');
    // tesseract.js never settles createWorker on a missing or bad model file, so both are checked first.
    await access(file);
    const problem = await traineddataProblem(file);
    if (problem) throw new ExtractionFailure('unsupported', `OCR is unavailable: ${problem}`);
    let failLoad: (error: unknown) => void = () => {};
    const loadFailed = new Promise<never>((_, reject) => (failLoad = reject));
    let loaded = false;
    const worker = await Promise.race([
      Tesseract.createWorker('eng', Tesseract.OEM.LSTM_ONLY, {
        langPath: this.languagePath,
        gzip: true,
        cacheMethod: 'none',
        // Without a handler tesseract.js throws a failed job's error from an event listener.
        errorHandler: (error: unknown) => {
          if (!loaded) failLoad(error);
        },
      }),
      loadFailed,
    ]);
    loaded = true;
    // Embedded images carry no usable resolution (a PDF image has none of its own); Tesseract
    // warns and guesses 70 dpi otherwise. 300 is what scans are made at.
    await worker.setParameters({ user_defined_dpi: '300' });
    return worker;
  }
}
