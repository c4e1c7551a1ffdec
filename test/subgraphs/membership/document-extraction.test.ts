import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DocumentExtractor, ExtractionFailure, type Extraction } from '../../../subgraphs/membership/document-extraction/document-extractor.js';
import { ALLOWED_TYPES, sniffDocumentType } from '../../../subgraphs/membership/document-extraction/document-type.js';
import {
  CSV_TEXT,
  DOCX_PARAGRAPHS,
  documentFixtures,
  elfBinary,
  encryptedPdf,
  MARKDOWN_TEXT,
  OCR_LINES,
  scannedPdf,
  textPdf,
  zipArchive,
  type DocumentFixture,
} from '../../support/document-fixtures.js';

let fixtures: Record<string, DocumentFixture>;
let extractor: DocumentExtractor;
/** Extraction time per fixture, printed at the end for the report. */
const timings: Record<string, number> = {};

async function timed(name: string, fixture: DocumentFixture): Promise<Extraction> {
  const started = performance.now();
  const result = await extractor.extract(fixture.bytes, fixture.mime!);
  timings[name] = Math.round(performance.now() - started);
  return result;
}

async function failure(bytes: Uint8Array, mime: string): Promise<ExtractionFailure> {
  const error = await extractor.extract(bytes, mime).then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ExtractionFailure);
  return error as ExtractionFailure;
}

beforeAll(async () => {
  fixtures = await documentFixtures();
  extractor = new DocumentExtractor({ ocrWorkers: 1 });
});

afterAll(async () => {
  await extractor?.close();
  console.log(`extraction times (ms): ${JSON.stringify(timings)}`);
});

describe('type sniffing', () => {
  it('finds every fixture type from its bytes, whatever its name says', async () => {
    for (const [name, fixture] of Object.entries(fixtures)) {
      const sniffed = await sniffDocumentType(fixture.bytes, fixture.filename);
      expect({ name, mime: sniffed?.mime ?? null }).toEqual({ name, mime: fixture.mime });
      if (sniffed) expect(ALLOWED_TYPES).toContain(sniffed.mime);
    }
  });

  it('sees through a lying extension: a PDF named .png, a PNG named .txt', async () => {
    expect(await sniffDocumentType(fixtures.lyingPdf.bytes, 'holiday.png')).toEqual({ mime: 'application/pdf', ext: 'pdf' });
    expect(await sniffDocumentType(fixtures.lyingPng.bytes, 'notes.txt')).toEqual({ mime: 'image/png', ext: 'png' });
  });

  it('refuses an ELF executable, a plain zip and a zip that only claims to be Word, even named .docx or .pdf', async () => {
    expect(await sniffDocumentType(elfBinary(), 'report.pdf')).toBeNull();
    expect(await sniffDocumentType(zipArchive({ 'a.txt': 'hello' }), 'contract.docx')).toBeNull();
    expect(await sniffDocumentType(fixtures.fakeDocx.bytes, 'contract.docx')).toBeNull();
    expect(await sniffDocumentType(fixtures.docx.bytes, 'contract.docx')).toEqual({ mime: fixtures.docx.mime, ext: 'docx' });
  });

  it('lets the filename choose among text subtypes only, and never makes binary text', async () => {
    const csv = new TextEncoder().encode(CSV_TEXT);
    expect(await sniffDocumentType(csv, 'data.csv')).toEqual({ mime: 'text/csv', ext: 'csv' });
    expect(await sniffDocumentType(csv, 'data.md')).toEqual({ mime: 'text/markdown', ext: 'md' });
    expect(await sniffDocumentType(csv)).toEqual({ mime: 'text/plain', ext: 'txt' });
    expect(await sniffDocumentType(new TextEncoder().encode('<!doctype html><p>hi</p>'))).toEqual({ mime: 'text/html', ext: 'html' });
    // NULs and invalid UTF-8 are binary, whatever the name.
    expect(await sniffDocumentType(new Uint8Array([0x68, 0x69, 0x00, 0x21]), 'a.txt')).toBeNull();
    expect(await sniffDocumentType(new Uint8Array([0x68, 0xff, 0xfe, 0x21]), 'a.csv')).toBeNull();
    expect(await sniffDocumentType(new Uint8Array(0), 'a.txt')).toBeNull();
  });

  it('reads at most 64 KiB: a UTF-8 character cut at the boundary is still text', async () => {
    const text = "ä".repeat(40_000); // 80,000 bytes of two-byte characters: byte 65,535 is the first half of one
    const bytes = new TextEncoder().encode(text);
    expect(await sniffDocumentType(bytes.subarray(0, 65_535 + 1000))).toEqual({ mime: 'text/plain', ext: 'txt' });
    expect(await sniffDocumentType(bytes.subarray(0, 65_535))).toEqual({ mime: 'text/plain', ext: 'txt' });
  });
});

describe('text extraction', () => {
  it('reads a PDF text layer page by page, with key fields and their positions', async () => {
    const result = await timed('textPdf', fixtures.textPdf);
    expect(result.method).toBe('text-layer');
    expect(result.pageCount).toBe(2);
    expect(result.pages.map((p) => p.method)).toEqual(['text-layer', 'text-layer']);
    expect(result.pages[0].text).toContain('Invoice No. INV-2026-0042');
    expect(result.pages[1].text).toContain('billing@acme.example');
    expect(result.confidence).toBeNull();
    const byKind = Object.fromEntries(result.keyFields.map((field) => [field.kind, field]));
    expect(byKind['invoice-number'].normalized).toBe('INV-2026-0042');
    expect(byKind.date.normalized).toBe('2026-11-23');
    expect(byKind.amount).toMatchObject({ normalized: '1234.56', currency: 'EUR' });
    expect(byKind.iban.normalized).toBe('DE89370400440532013000');
    expect(byKind.email).toMatchObject({ normalized: 'billing@acme.example', page: 2 });
    for (const field of result.keyFields) {
      expect(result.pages[field.page - 1].text.slice(field.start, field.end)).toBe(field.value);
    }
  });

  it('OCRs a PNG of rendered text, with a confidence', async () => {
    const result = await timed('png', fixtures.png);
    expect(result.method).toBe('ocr');
    expect(result.pages).toHaveLength(1);
    for (const word of ['INVOICE', 'NUMBER', '4711', 'ACME', 'CONSULTING', 'TOTAL', 'AMOUNT', 'EUR']) expect(result.text).toContain(word);
    expect(result.confidence).toBeGreaterThan(0.5);
    expect(result.confidence).toBeLessThanOrEqual(1);
    expect(result.pages[0].confidence).toBe(result.confidence);
    expect(result.keyFields.find((f) => f.kind === 'invoice-number')?.normalized).toBe('4711');
  });

  it('OCRs JPEG, TIFF and WebP too', async () => {
    for (const name of ['jpeg', 'tiff', 'webp']) {
      const result = await timed(name, fixtures[name]);
      expect(result.method).toBe('ocr');
      expect(result.text).toContain('CONSULTING');
    }
  });

  it('OCRs a scanned PDF page (an image, no text layer) from its embedded image', async () => {
    const result = await timed('scannedPdf', fixtures.scannedPdf);
    expect(result.method).toBe('ocr');
    expect(result.pages[0]).toMatchObject({ page: 1, method: 'ocr' });
    for (const word of OCR_LINES.join(' ').split(' ').filter((w) => /^[A-Z]+$/.test(w))) expect(result.text).toContain(word);
    expect(result.confidence).toBeGreaterThan(0.5);
  });

  it('reads a PDF with a text page and a scanned page as mixed, each page by its own method', async () => {
    const bytes = await scannedPdf([['SECOND PAGE SCANNED WORDS']], [['The first page has a real text layer, long enough.']]);
    const result = await extractor.extract(bytes, 'application/pdf');
    expect(result.method).toBe('mixed');
    expect(result.pages.map((p) => p.method)).toEqual(['text-layer', 'ocr']);
    expect(result.pages[1].text).toContain('SCANNED');
    expect(result.pages[0].confidence).toBeNull();
    expect(result.confidence).toBe(result.pages[1].confidence);
  });

  it('OCRs every page of a multi-page scan (timed per page, warm)', async () => {
    const pages = [['FIRST PAGE OF THE SCAN'], ['SECOND PAGE OF THE SCAN'], ['THIRD PAGE OF THE SCAN']];
    const bytes = await scannedPdf(pages);
    const started = performance.now();
    const result = await extractor.extract(bytes, 'application/pdf');
    timings.ocrPerPage = Math.round((performance.now() - started) / pages.length);
    expect(result.pageCount).toBe(3);
    expect(result.pages.map((p) => p.method)).toEqual(['ocr', 'ocr', 'ocr']);
    ['FIRST', 'SECOND', 'THIRD'].forEach((word, index) => expect(result.pages[index].text).toContain(word));
  });

  it('reads a DOCX', async () => {
    const result = await timed('docx', fixtures.docx);
    expect(result.method).toBe('plain');
    for (const paragraph of DOCX_PARAGRAPHS) expect(result.text).toContain(paragraph);
    expect(result.language).toBe('en');
    expect(result.keyFields.find((f) => f.kind === 'date')?.normalized).toBe('2026-12-01');
  });

  it('strips HTML to its text: scripts and styles dropped, entities decoded', async () => {
    const result = await timed('html', fixtures.html);
    expect(result.text).toContain('Revenue grew by 12 % & costs fell.');
    expect(result.text).toContain('<reports@acme.example>');
    expect(result.text).not.toContain('secret');
    expect(result.text).not.toContain('color');
    expect(result.text).not.toMatch(/<\/?p>/);
    expect(result.keyFields.find((f) => f.kind === 'email')?.normalized).toBe('reports@acme.example');
  });

  it('keeps CSV, Markdown and plain text as they are', async () => {
    expect((await timed('csv', fixtures.csv)).text).toBe(CSV_TEXT);
    expect((await timed('markdown', fixtures.markdown)).text).toBe(MARKDOWN_TEXT);
    const text = await timed('text', fixtures.text);
    expect(text.method).toBe('plain');
    expect(text.pageCount).toBe(1);
    expect(text.keyFields.find((f) => f.kind === 'date')?.normalized).toBe('2026-11-20');
  });

  it('detects the language of a long enough text, and answers null for a short one', async () => {
    const english = 'The board met on Tuesday to discuss the budget for next year. Members agreed that the annual conference should be held in the spring, and that the fees would stay the same.';
    const german = 'Der Vorstand hat sich am Dienstag getroffen, um den Haushalt für das nächste Jahr zu besprechen. Die Mitglieder waren sich einig, dass die Jahreskonferenz im Frühling stattfinden soll.';
    expect((await extractor.extract(new TextEncoder().encode(english), 'text/plain')).language).toBe('en');
    expect((await extractor.extract(new TextEncoder().encode(german), 'text/plain')).language).toBe('de');
    expect((await extractor.extract(new TextEncoder().encode('Hello there'), 'text/plain')).language).toBeNull();
    // Twenty words of an English invoice score French almost as high: unclear is null, not a wrong guess.
    expect((await extractor.extract(fixtures.textPdf.bytes, 'application/pdf')).language).toBeNull();
  });
});

describe('failures with a reason, never a crash', () => {
  it('an encrypted PDF fails as encrypted', async () => {
    const error = await failure(encryptedPdf(), 'application/pdf');
    expect(error.reason).toBe('encrypted');
    expect(error.extensions.code).toBe('BAD_USER_INPUT');
  });

  it('a corrupt PDF fails as corrupt', async () => {
    expect((await failure(fixtures.corruptPdf.bytes, 'application/pdf')).reason).toBe('corrupt');
    // Truncated in the middle: the start of a real PDF.
    const real = await textPdf();
    expect(['corrupt', 'empty']).toContain((await failure(real.subarray(0, 200), 'application/pdf')).reason);
  });

  it('a broken DOCX or image fails as corrupt', async () => {
    expect((await failure(zipArchive({ 'word/document.xml': '<not-closed' }), fixtures.docx.mime!)).reason).toBe('corrupt');
    expect((await failure(fixtures.png.bytes.subarray(0, 100), 'image/png')).reason).toBe('corrupt');
  });

  it('a type without an extractor is unsupported, a document without text is empty', async () => {
    expect((await failure(elfBinary(), 'application/x-elf')).reason).toBe('unsupported');
    expect((await failure(new TextEncoder().encode('   \n  '), 'text/plain')).reason).toBe('empty');
    expect((await failure(await textPdf([[]]), 'application/pdf')).reason).toBe('empty');
  });

  it('honours an aborted signal', async () => {
    const controller = new AbortController();
    controller.abort(new Error('time limit'));
    await expect(extractor.extract(fixtures.textPdf.bytes, 'application/pdf', controller.signal)).rejects.toThrow('time limit');
    const running = new AbortController();
    const ocr = extractor.extract(fixtures.png.bytes, 'image/png', running.signal);
    setTimeout(() => running.abort(new Error('stopped')), 5);
    await expect(ocr).rejects.toThrow('stopped');
    // The extractor still works afterwards (the abandoned worker was replaced).
    expect((await extractor.extract(fixtures.png.bytes, 'image/png')).text).toContain('ACME');
  });

  it('caps the OCR pages: pages past the cap keep their (empty) text layer', async () => {
    const capped = new DocumentExtractor({ maxOcrPages: 1 });
    try {
      const bytes = await scannedPdf([['FIRST SCANNED PAGE'], ['SECOND SCANNED PAGE']]);
      const result = await capped.extract(bytes, 'application/pdf');
      expect(result.pageCount).toBe(2);
      expect(result.pages.map((p) => p.method)).toEqual(['ocr', 'text-layer']);
      expect(result.pages[0].text).toContain('FIRST');
      expect(result.pages[1].text).toBe('');
    } finally {
      await capped.close();
    }
  });
});
