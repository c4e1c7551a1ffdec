import sharp from 'sharp';
import { extractImages, getDocumentProxy } from 'unpdf';
import mammoth from 'mammoth';
import { DOCX_MIME } from './document-type.js';
import { DocumentOcr, type OcrReading } from './document-ocr.js';
import { ExtractionFailure } from './extraction-failure.js';
import { htmlToText } from './html-text.js';
import { findKeyFields, type KeyField } from './key-fields.js';
import { detectLanguage } from './language.js';

export { ExtractionFailure } from './extraction-failure.js';
export type { ExtractionFailureReason } from './extraction-failure.js';
export type { KeyField } from './key-fields.js';

export interface ExtractedPage {
  page: number;
  text: string;
  method: 'text-layer' | 'ocr' | 'plain';
  /** OCR pages only: Tesseract's mean confidence, 0 to 1. */
  confidence: number | null;
}

export interface Extraction {
  pages: ExtractedPage[];
  /** The pages' texts joined by a blank line. */
  text: string;
  pageCount: number;
  language: string | null;
  method: 'text-layer' | 'ocr' | 'mixed' | 'plain';
  /** The mean confidence of the OCR'd pages; null when nothing was OCR'd. */
  confidence: number | null;
  keyFields: KeyField[];
}

export interface DocumentExtractorOptions {
  /** Tesseract workers (threads) shared by every extraction of this extractor (default 1). */
  ocrWorkers?: number;
  /** Pages OCR'd at most per document (default 20); later pages without a text layer stay empty. */
  maxOcrPages?: number;
  /** Pages read at most per document (default 2000); the page count still says how many there are. */
  maxPages?: number;
}

/** A page with fewer visible characters than this in its text layer is taken for a scan and OCR'd. */
const MIN_TEXT_LAYER_CHARS = 16;
/** Embedded images smaller than this on either side are decorations (rules, bullets, logos' specks). */
const MIN_OCR_IMAGE_SIDE = 32;
const MAX_IMAGES_PER_PAGE = 8;
/** Decoded image size refused beyond this (a decompression bomb costs memory, not bytes). */
const MAX_IMAGE_PIXELS = 60_000_000;

const IMAGE_TYPES = new Set(['image/png', 'image/jpeg', 'image/tiff', 'image/webp']);
const PLAIN_TYPES = new Set(['text/plain', 'text/csv', 'text/markdown']);

/**
 * Text from a document's bytes: the PDF text layer (pdf.js through unpdf), OCR (Tesseract, English
 * data shipped in npm) for images and for PDF pages without a text layer, DOCX (mammoth), HTML
 * (stripped) and plain text; then its language and key fields. One extractor serves many
 * documents; close() ends its OCR workers.
 */
export class DocumentExtractor {
  private readonly ocr: DocumentOcr;
  private readonly maxOcrPages: number;
  private readonly maxPages: number;

  constructor(options: DocumentExtractorOptions = {}) {
    this.ocr = new DocumentOcr(options.ocrWorkers ?? 1);
    this.maxOcrPages = options.maxOcrPages ?? 20;
    this.maxPages = options.maxPages ?? 2000;
  }

  async extract(bytes: Uint8Array, mime: string, signal: AbortSignal = new AbortController().signal): Promise<Extraction> {
    signal.throwIfAborted();
    let pages: ExtractedPage[];
    let pageCount: number;
    if (mime === 'application/pdf') ({ pages, pageCount } = await this.pdf(bytes, signal));
    else if (IMAGE_TYPES.has(mime)) ({ pages, pageCount } = await this.image(bytes, signal));
    else if (mime === DOCX_MIME) ({ pages, pageCount } = await docx(bytes));
    else if (mime === 'text/html') ({ pages, pageCount } = single(htmlToText(utf8(bytes))));
    else if (PLAIN_TYPES.has(mime)) ({ pages, pageCount } = single(utf8(bytes)));
    else throw new ExtractionFailure('unsupported', `No text can be extracted from ${mime}`);
    signal.throwIfAborted();

    if (pages.every((page) => page.text.trim() === '')) throw new ExtractionFailure('empty', 'The document has no text, and OCR found none');
    const text = pages.map((page) => page.text).join('\n\n');
    const methods = new Set(pages.filter((page) => page.text.trim() !== '').map((page) => page.method));
    const ocrPages = pages.filter((page) => page.confidence !== null);
    return {
      pages,
      text,
      pageCount,
      language: detectLanguage(text),
      method: methods.has('plain') ? 'plain' : methods.size > 1 ? 'mixed' : methods.has('ocr') ? 'ocr' : 'text-layer',
      confidence: ocrPages.length ? round(ocrPages.reduce((sum, page) => sum + (page.confidence ?? 0), 0) / ocrPages.length) : null,
      keyFields: pages.flatMap((page) => findKeyFields(page.text, page.page)),
    };
  }

  close(): Promise<void> {
    return this.ocr.close();
  }

  private async pdf(bytes: Uint8Array, signal: AbortSignal): Promise<{ pages: ExtractedPage[]; pageCount: number }> {
    // pdf.js refuses a Buffer and may detach what it is given: it gets its own copy.
    const data = new Uint8Array(bytes);
    let pdf: Awaited<ReturnType<typeof getDocumentProxy>>;
    try {
      // maxImageSize: pdf.js itself skips decoding a bigger image (a bomb costs memory, not bytes).
      pdf = await abortable(getDocumentProxy(data, { verbosity: 0, stopAtErrors: false, maxImageSize: MAX_IMAGE_PIXELS }), signal);
    } catch (error) {
      if (signal.aborted) throw signal.reason;
      throw pdfFailure(error);
    }
    try {
      const pages: ExtractedPage[] = [];
      let ocrDone = 0;
      for (let number = 1; number <= Math.min(pdf.numPages, this.maxPages); number++) {
        signal.throwIfAborted();
        let text: string;
        try {
          const page = await abortable(pdf.getPage(number), signal);
          const content = await abortable(page.getTextContent(), signal);
          text = content.items.map((item) => ('str' in item ? item.str + (item.hasEOL ? '\n' : '') : '')).join('').trim();
          page.cleanup();
        } catch (error) {
          if (signal.aborted) throw signal.reason;
          throw pdfFailure(error);
        }
        if (text.replace(/\s/g, '').length >= MIN_TEXT_LAYER_CHARS || ocrDone >= this.maxOcrPages) {
          pages.push({ page: number, text, method: 'text-layer', confidence: null });
          continue;
        }
        const reading = await this.pdfPageImages(pdf, number, signal);
        if (reading === null) {
          pages.push({ page: number, text, method: 'text-layer', confidence: null });
          continue;
        }
        ocrDone++;
        // A few stray characters of text layer (a page number) are kept when OCR reads nothing.
        const ocrText = reading.text.trim();
        pages.push(ocrText || !text ? { page: number, text: ocrText, method: 'ocr', confidence: round(reading.confidence) } : { page: number, text, method: 'text-layer', confidence: null });
      }
      return { pages, pageCount: pdf.numPages };
    } finally {
      // This pdf.js build has destroy() on the loading task only; it frees the document's objects.
      await pdf.loadingTask.destroy().catch(() => {});
    }
  }

  /** The OCR of a PDF page's embedded images (no renderer: a scan is an image on the page), or null when it has none. */
  private async pdfPageImages(pdf: Awaited<ReturnType<typeof getDocumentProxy>>, number: number, signal: AbortSignal): Promise<OcrReading | null> {
    let images: Awaited<ReturnType<typeof extractImages>>;
    try {
      images = await abortable(extractImages(pdf, number), signal);
    } catch (error) {
      if (signal.aborted) throw signal.reason;
      // An image pdf.js cannot decode leaves the page without OCR rather than failing the document.
      return null;
    }
    const readable = images.filter((image) => image.width >= MIN_OCR_IMAGE_SIDE && image.height >= MIN_OCR_IMAGE_SIDE && image.width * image.height <= MAX_IMAGE_PIXELS).slice(0, MAX_IMAGES_PER_PAGE);
    if (readable.length === 0) return null;
    const readings: OcrReading[] = [];
    for (const image of readable) {
      const png = await sharp(Buffer.from(image.data.buffer, image.data.byteOffset, image.data.byteLength), {
        raw: { width: image.width, height: image.height, channels: image.channels },
      })
        .greyscale()
        .png()
        .toBuffer();
      readings.push(await this.ocr.recognize(png, signal));
    }
    return combine(readings);
  }

  private async image(bytes: Uint8Array, signal: AbortSignal): Promise<{ pages: ExtractedPage[]; pageCount: number }> {
    let pageCount: number;
    try {
      pageCount = (await sharp(bytes, { limitInputPixels: MAX_IMAGE_PIXELS }).metadata()).pages ?? 1;
    } catch (error) {
      throw new ExtractionFailure('corrupt', `The image cannot be decoded (${errorText(error)})`);
    }
    const pages: ExtractedPage[] = [];
    // A multi-page TIFF is a scanned document: each page is OCR'd, up to the cap.
    for (let index = 0; index < Math.min(pageCount, this.maxOcrPages); index++) {
      signal.throwIfAborted();
      let png: Buffer;
      try {
        png = await sharp(bytes, { page: index, limitInputPixels: MAX_IMAGE_PIXELS }).greyscale().png().toBuffer();
      } catch (error) {
        throw new ExtractionFailure('corrupt', `Page ${index + 1} of the image cannot be decoded (${errorText(error)})`);
      }
      const reading = await this.ocr.recognize(png, signal);
      pages.push({ page: index + 1, text: reading.text.trim(), method: 'ocr', confidence: round(reading.confidence) });
    }
    return { pages, pageCount };
  }
}

async function docx(bytes: Uint8Array): Promise<{ pages: ExtractedPage[]; pageCount: number }> {
  try {
    const { value } = await mammoth.extractRawText({ buffer: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) });
    // Word keeps no page breaks in the file (they depend on layout): a DOCX is one page of text.
    return single(value.replace(/\n{3,}/g, '\n\n').trim());
  } catch (error) {
    throw new ExtractionFailure('corrupt', `The Word document cannot be read (${errorText(error)})`);
  }
}

function single(text: string): { pages: ExtractedPage[]; pageCount: number } {
  return { pages: [{ page: 1, text, method: 'plain', confidence: null }], pageCount: 1 };
}

function utf8(bytes: Uint8Array): string {
  return new TextDecoder('utf-8').decode(bytes).replace(/^\uFEFF/, '');
}

function combine(readings: OcrReading[]): OcrReading {
  const texts = readings.map((reading) => reading.text.trim()).filter(Boolean);
  // Weighted by text length: a blank image's zero confidence says nothing about the page's words.
  const weight = readings.reduce((sum, reading) => sum + reading.text.trim().length, 0);
  const confidence = weight ? readings.reduce((sum, reading) => sum + reading.confidence * reading.text.trim().length, 0) / weight : 0;
  return { text: texts.join('\n'), confidence };
}

function pdfFailure(error: unknown): ExtractionFailure {
  if (error instanceof ExtractionFailure) return error;
  const name = (error as { name?: string })?.name;
  if (name === 'PasswordException') return new ExtractionFailure('encrypted', 'The PDF is encrypted with a password');
  return new ExtractionFailure('corrupt', `The PDF cannot be read (${errorText(error)})`);
}

function errorText(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).slice(0, 200);
}

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}

/** The promise, or the signal's reason as soon as it aborts (pdf.js work cannot be cancelled, only abandoned). */
function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}
