import { createHash } from 'node:crypto';
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../support/platform-harness.js';
import { corruptPdf, docxFile, DOCX_PARAGRAPHS, elfBinary, encryptedPdf, PLAIN_TEXT, textPdf, textPng } from '../../support/document-fixtures.js';
import { DEFAULT_DOCUMENT_SETTINGS } from '../../../subgraphs/membership/document/document-settings.js';

const MAX_UPLOAD = 2 * 1024 * 1024;
let platform: TestPlatform;

beforeAll(async () => {
  platform = await startTestPlatform({ documents: { ...DEFAULT_DOCUMENT_SETTINGS, maxUploadBytes: MAX_UPLOAD, workers: 2 } });
}, 60_000);

afterAll(async () => {
  await platform?.close();
});

interface DocumentBody {
  id: string;
  filename: string;
  title: string | null;
  mimeType: string;
  sizeBytes: number;
  sha256: string;
  tags: string[];
  status: string;
  memberId: string | null;
  category: string | null;
  categorySource: string | null;
  failureReason: string | null;
  deletedAt: string | null;
  purgeAt: string | null;
  snippet: string | null;
  rank: number | null;
  livemode: boolean;
}

let accountCounter = 0;
const freshKey = (kind: 'live' | 'test' = 'live', account = `docs-${++accountCounter}`) => platform.issueKey(account, kind);
const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

async function body<T>(response: Response, status: number): Promise<T> {
  const text = await response.text();
  expect(response.status, text).toBe(status);
  return JSON.parse(text) as T;
}

async function expectError(response: Response, status: number, code: string) {
  const parsed = await body<{ error: Record<string, unknown> }>(response, status);
  expect(parsed.error).toMatchObject({ code, request_id: response.headers.get('x-request-id') });
  return parsed.error;
}

function multipart(key: string, bytes: Uint8Array, filename: string, fields: Record<string, string> = {}): Promise<Response> {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  form.append('file', new Blob([Buffer.from(bytes)]), filename);
  return platform.request('/api/v1/documents/upload', { method: 'POST', key, body: form });
}

function jsonUpload(key: string, bytes: Uint8Array, filename: string, extra: Record<string, unknown> = {}): Promise<Response> {
  return platform.request('/api/v1/documents/upload', { method: 'POST', key, json: { filename, content: Buffer.from(bytes).toString('base64'), ...extra } });
}

/** Polls GET extract until it stops answering 202. */
async function settled(key: string, id: string, timeoutMs = 45_000): Promise<Response> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const response = await platform.request(`/api/v1/documents/${id}/extract`, { key });
    if (response.status !== 202) return response;
    await response.text();
    if (Date.now() > deadline) throw new Error(`document ${id} still processing after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

describe('POST /documents/upload', () => {
  it('takes a multipart PDF, answers 201 pending at once, then extract goes from 202 to the text per page', async () => {
    const key = await freshKey();
    const pdf = await textPdf();
    const created = await body<DocumentBody>(await multipart(key, pdf, 'invoice.pdf', { title: 'November invoice', tags: 'Finance, 2026' }), 201);
    expect(created).toMatchObject({ filename: 'invoice.pdf', title: 'November invoice', mimeType: 'application/pdf', sizeBytes: pdf.length, sha256: sha256(pdf), tags: ['finance', '2026'], livemode: true });
    expect(['PENDING', 'PROCESSING']).toContain(created.status);

    const first = await platform.request(`/api/v1/documents/${created.id}/extract`, { key });
    if (first.status === 202) expect(await first.json()).toMatchObject({ id: created.id });
    else await first.text();

    const extraction = await body<{ status: string; pageCount: number; method: string; pages: { page: number; text: string; method: string }[]; text: string; keyFields: { kind: string; normalized: string }[] }>(
      await settled(key, created.id),
      200,
    );
    expect(extraction.status).toBe('READY');
    expect(extraction.pageCount).toBe(2);
    expect(extraction.method).toBe('text-layer');
    expect(extraction.pages[0].text).toContain('INV-2026-0042');
    expect(extraction.pages[1].text).toContain('Thank you for your business');
    expect(extraction.keyFields.map((field) => field.kind)).toEqual(expect.arrayContaining(['invoice-number', 'iban', 'email']));

    const stored = await body<DocumentBody & { pageCount: number; processedAt: string }>(await platform.request(`/api/v1/documents/${created.id}`, { key }), 200);
    expect(stored).toMatchObject({ status: 'READY', pageCount: 2 });
    expect(stored.processedAt).not.toBeNull();
  });

  it('takes JSON with base64 content, and files a DOCX by its bytes', async () => {
    const key = await freshKey();
    const docx = await docxFile();
    const created = await body<DocumentBody>(await jsonUpload(key, docx, 'contract.docx', { title: 'Contract', tags: ['hr'] }), 201);
    expect(created).toMatchObject({ mimeType: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document', sizeBytes: docx.length, sha256: sha256(docx), tags: ['hr'] });
    const extraction = await body<{ text: string }>(await settled(key, created.id), 200);
    for (const paragraph of DOCX_PARAGRAPHS) expect(extraction.text).toContain(paragraph);
  });

  it('sniffs the type from the bytes: a PNG named .pdf is a PNG (read by OCR), an ELF binary named .pdf is 415', async () => {
    const key = await freshKey();
    const png = await body<DocumentBody>(await multipart(key, textPng(), 'scan.pdf'), 201);
    expect(png.mimeType).toBe('image/png');
    // Read by OCR through the pipeline: the rendered words, with a confidence.
    const ocr = await body<{ method: string; confidence: number; text: string; pages: { method: string }[] }>(await settled(key, png.id, 90_000), 200);
    expect(ocr.method).toBe('ocr');
    expect(ocr.pages[0].method).toBe('ocr');
    expect(ocr.text).toContain('4711');
    expect(ocr.confidence).toBeGreaterThan(0.5);
    await expectError(await multipart(key, elfBinary(), 'report.pdf'), 415, 'unsupported_document_type');
    await expectError(await jsonUpload(key, elfBinary(), 'report.pdf', { contentType: 'application/pdf' }), 415, 'unsupported_document_type');
    const list = await body<{ data: DocumentBody[] }>(await platform.request('/api/v1/documents', { key }), 200);
    expect(list.data.map((document) => document.id)).toEqual([png.id]);
  });

  it('refuses other encodings with 415 and a form without a file with 400', async () => {
    const key = await freshKey();
    await expectError(await platform.request('/api/v1/documents/upload', { method: 'POST', key, headers: { 'content-type': 'text/plain' }, body: 'hello' }), 415, 'unsupported_upload_encoding');
    const form = new FormData();
    form.append('title', 'no file');
    await expectError(await platform.request('/api/v1/documents/upload', { method: 'POST', key, body: form }), 400, 'missing_file');
    await expectError(await platform.request('/api/v1/documents/upload', { method: 'POST', key, json: { filename: 'a.txt', content: '***' } }), 400, 'invalid_document_content');
  });

  it('answers 413 from Content-Length before reading, and stops reading a chunked body past the cap', async () => {
    const key = await freshKey();
    const big = Buffer.alloc(MAX_UPLOAD + 200 * 1024, 0x41);
    await expectError(await multipart(key, big, 'big.txt'), 413, 'document_too_large');
    await expectError(await jsonUpload(key, big, 'big.txt'), 413, 'document_too_large');

    // Chunked: no Content-Length; the server must answer while the client is still sending.
    const url = new URL(platform.baseUrl + '/api/v1/documents/upload');
    const boundary = 'docs-boundary';
    const { status, sent, text } = await new Promise<{ status: number; sent: number; text: string }>((resolve, reject) => {
      let sent = 0;
      let answered = false;
      const req = http.request(url, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': `multipart/form-data; boundary=${boundary}`, 'transfer-encoding': 'chunked' },
      });
      req.on('response', (res) => {
        answered = true;
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, sent, text }));
      });
      req.on('error', (error) => (answered ? undefined : reject(error)));
      req.write(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="endless.txt"\r\nContent-Type: text/plain\r\n\r\n`);
      const chunk = Buffer.alloc(64 * 1024, 0x42);
      const pump = () => {
        // Up to 20 times the cap: a server that reads it all would take this long to answer.
        while (!answered && sent < MAX_UPLOAD * 20) {
          sent += chunk.length;
          if (!req.write(chunk)) return void req.once('drain', pump);
        }
        if (!answered) req.end(`\r\n--${boundary}--\r\n`);
      };
      pump();
    });
    expect(status, text).toBe(413);
    expect(JSON.parse(text).error.code).toBe('document_too_large');
    expect(sent).toBeLessThan(MAX_UPLOAD * 20);
  });

  it('answers 409 with the existing id when the same bytes are uploaded again by the account and mode', async () => {
    const key = await freshKey('live', 'docs-dup');
    const bytes = Buffer.from(PLAIN_TEXT + 'duplicate check\n');
    const first = await body<DocumentBody>(await multipart(key, bytes, 'letter.txt'), 201);
    const error = await expectError(await jsonUpload(key, bytes, 'copy.txt'), 409, 'document_duplicate');
    expect(error.existing_id).toBe(first.id);
    // Another mode of the same account is another set of documents.
    const testKey = await freshKey('test', 'docs-dup');
    await body<DocumentBody>(await multipart(testKey, bytes, 'letter.txt'), 201);
  });

  it('streams past the Idempotency-Key step: a 1.5 MiB upload with a key is filed, and its retry is the duplicate 409', async () => {
    const key = await freshKey();
    const bytes = Buffer.from(('Minutes of the general assembly. ').repeat(48_000) + Date.now());
    expect(bytes.length).toBeGreaterThan(1024 * 1024);
    const send = () => {
      const form = new FormData();
      form.append('file', new Blob([bytes]), 'minutes.txt');
      return platform.request('/api/v1/documents/upload', { method: 'POST', key, body: form, headers: { 'idempotency-key': 'upload-1' } });
    };
    const first = await body<DocumentBody>(await send(), 201);
    expect(first.sizeBytes).toBe(bytes.length);
    const retry = await expectError(await send(), 409, 'document_duplicate');
    expect(retry.existing_id).toBe(first.id);
  });
});

describe('GET /documents/:id/download', () => {
  it('streams the identical bytes with their type, length, a safe name and nosniff', async () => {
    const key = await freshKey();
    const pdf = await textPdf([['Download check'], ['Second page']]);
    const created = await body<DocumentBody>(await multipart(key, pdf, 'Rechnung; Nov ü.pdf'), 201);
    const response = await platform.request(`/api/v1/documents/${created.id}/download`, { key });
    expect(response.status).toBe(200);
    const bytes = new Uint8Array(await response.arrayBuffer());
    expect(sha256(bytes)).toBe(sha256(pdf));
    expect(response.headers.get('content-type')).toBe('application/pdf');
    expect(response.headers.get('content-length')).toBe(String(pdf.length));
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(response.headers.get('content-disposition')).toBe(`attachment; filename="Rechnung_ Nov _.pdf"; filename*=UTF-8''Rechnung%3B%20Nov%20%C3%BC.pdf`);
  });
});

describe('scoping', () => {
  it('hides a document from other accounts and from the other mode: 404 on every path', async () => {
    const owner = await freshKey('live', 'docs-owner');
    const created = await body<DocumentBody>(await multipart(owner, Buffer.from('owned by one account\n' + Date.now()), 'mine.txt'), 201);
    for (const key of [await freshKey('live', 'docs-stranger'), await freshKey('test', 'docs-owner')]) {
      await expectError(await platform.request(`/api/v1/documents/${created.id}`, { key }), 404, 'document_not_found');
      await expectError(await platform.request(`/api/v1/documents/${created.id}/download`, { key }), 404, 'document_not_found');
      await expectError(await platform.request(`/api/v1/documents/${created.id}/extract`, { key }), 404, 'document_not_found');
      await expectError(await platform.request(`/api/v1/documents/${created.id}/classify`, { key }), 404, 'document_not_found');
      await expectError(await platform.request(`/api/v1/documents/${created.id}`, { key, method: 'DELETE' }), 404, 'document_not_found');
      const list = await body<{ data: DocumentBody[] }>(await platform.request('/api/v1/documents', { key }), 200);
      expect(list.data).toEqual([]);
    }
  });
});

describe('processing failures', () => {
  it('fails a corrupt PDF and an encrypted PDF with their reason: extract answers 422', async () => {
    const key = await freshKey();
    for (const [bytes, reason] of [
      [corruptPdf(), 'corrupt'],
      [encryptedPdf(), 'encrypted'],
    ] as const) {
      const created = await body<DocumentBody>(await multipart(key, bytes, `${reason}.pdf`), 201);
      const error = await expectError(await settled(key, created.id), 422, 'document_processing_failed');
      expect(error.message).toContain(reason);
      const stored = await body<DocumentBody>(await platform.request(`/api/v1/documents/${created.id}`, { key }), 200);
      expect(stored).toMatchObject({ status: 'FAILED', failureReason: reason });
    }
  });
});

describe('GET /documents', () => {
  it('searches the extracted text, best match first, with a highlighted snippet, and filters', async () => {
    const key = await freshKey();
    const texts = {
      boat: 'The sailing boat was repaired in the harbour. The boat needs new sails before the regatta.',
      car: 'The car was serviced. A boat trailer was attached to the car for the summer.',
      tax: 'Annual tax return for the association, filed with the revenue office.',
    };
    const ids: Record<string, string> = {};
    for (const [name, text] of Object.entries(texts)) {
      ids[name] = (await body<DocumentBody>(await multipart(key, Buffer.from(text), `${name}.txt`, { tags: name === 'tax' ? 'finance' : 'vehicles' }), 201)).id;
    }
    for (const id of Object.values(ids)) await body(await settled(key, id), 200);

    const found = await body<{ data: DocumentBody[] }>(await platform.request('/api/v1/documents?q=boat', { key }), 200);
    expect(found.data.map((document) => document.id)).toEqual([ids.boat, ids.car]);
    expect(found.data[0].snippet).toContain('<mark>boat</mark>');
    expect(found.data[0].rank).toBeGreaterThan(found.data[1].rank!);

    const paged = await body<{ data: DocumentBody[]; hasMore: boolean; nextCursor: string }>(await platform.request('/api/v1/documents?q=boat&limit=1', { key }), 200);
    expect(paged.data.map((document) => document.id)).toEqual([ids.boat]);
    expect(paged.hasMore).toBe(true);
    const next = await body<{ data: DocumentBody[]; hasMore: boolean }>(await platform.request(`/api/v1/documents?q=boat&limit=1&after=${paged.nextCursor}`, { key }), 200);
    expect(next.data.map((document) => document.id)).toEqual([ids.car]);
    expect(next.hasMore).toBe(false);

    const tagged = await body<{ data: DocumentBody[] }>(await platform.request('/api/v1/documents?tag=finance', { key }), 200);
    expect(tagged.data.map((document) => document.id)).toEqual([ids.tax]);
    const byType = await body<{ data: DocumentBody[] }>(await platform.request('/api/v1/documents?mimeType=application/pdf', { key }), 200);
    expect(byType.data).toEqual([]);
    const ready = await body<{ data: DocumentBody[] }>(await platform.request('/api/v1/documents?status=READY&q=summer', { key }), 200);
    expect(ready.data.map((document) => document.id)).toEqual([ids.car]);
    const future = new Date(Date.now() + 3_600_000).toISOString();
    const none = await body<{ data: DocumentBody[] }>(await platform.request(`/api/v1/documents?createdFrom=${encodeURIComponent(future)}`, { key }), 200);
    expect(none.data).toEqual([]);
  });
});

describe('DELETE /documents/:id', () => {
  it('moves the document to the trash, hidden from lists until restored', async () => {
    const key = await freshKey();
    const created = await body<DocumentBody>(await multipart(key, Buffer.from('trash me\n'), 'trash.txt'), 201);
    const trashed = await body<DocumentBody>(await platform.request(`/api/v1/documents/${created.id}`, { key, method: 'DELETE' }), 200);
    expect(trashed.deletedAt).not.toBeNull();
    expect(new Date(trashed.purgeAt!).getTime() - new Date(trashed.deletedAt!).getTime()).toBe(30 * 86_400_000);
    expect((await body<{ data: DocumentBody[] }>(await platform.request('/api/v1/documents', { key }), 200)).data).toEqual([]);
    const trash = await body<{ data: DocumentBody[] }>(await platform.request('/api/v1/documents?trashed=true', { key }), 200);
    expect(trash.data.map((document) => document.id)).toEqual([created.id]);
    // The same bytes again while the first is in the trash: a new document, not a duplicate.
    await body<DocumentBody>(await multipart(key, Buffer.from('trash me\n'), 'again.txt'), 201);

    const restored = await body<DocumentBody>(await platform.request(`/api/v1/documents/${created.id}/restore`, { key, method: 'POST' }), 200);
    expect(restored.deletedAt).toBeNull();
    await expectError(await platform.request(`/api/v1/documents/${created.id}/restore`, { key, method: 'POST' }), 409, 'document_not_trashed');
    expect((await body<{ data: DocumentBody[] }>(await platform.request('/api/v1/documents', { key }), 200)).data).toHaveLength(2);
  });
});

describe('GraphQL uploads', () => {
  async function graphql<T>(key: string, query: string, variables: Record<string, unknown>): Promise<{ data: T; errors?: { extensions: Record<string, unknown> }[] }> {
    return body(await platform.request('/graphql', { method: 'POST', key, json: { query, variables } }), 200);
  }

  it('two steps: createDocumentUpload, PUT the bytes, createDocument', async () => {
    const key = await freshKey();
    const pdf = await textPdf([['Two step upload']]);
    const ticket = await graphql<{ createDocumentUpload: { uploadId: string; uploadPath: string; method: string; maxBytes: number } }>(
      key,
      'mutation($f: String!) { createDocumentUpload(filename: $f) { uploadId uploadPath method maxBytes } }',
      { f: 'two-step.pdf' },
    );
    expect(ticket.data.createDocumentUpload).toMatchObject({ method: 'PUT', maxBytes: MAX_UPLOAD });
    const put = await platform.request(`/api/v1${ticket.data.createDocumentUpload.uploadPath}`, { method: 'PUT', key, body: Buffer.from(pdf), headers: { 'content-type': 'application/octet-stream' } });
    expect(await body(put, 200)).toMatchObject({ sha256: sha256(pdf), mimeType: 'application/pdf' });
    // Another account cannot use the ticket.
    const stranger = await graphql<unknown>(await freshKey(), 'mutation($u: ID!) { createDocument(uploadId: $u) { id } }', { u: ticket.data.createDocumentUpload.uploadId });
    expect(stranger.errors?.[0].extensions).toMatchObject({ code: 'NOT_FOUND', reason: 'document_upload_not_found' });
    const created = await graphql<{ createDocument: { id: string; filename: string; status: string; sha256: string } }>(
      key,
      'mutation($u: ID!) { createDocument(uploadId: $u, title: "Two step") { id filename status sha256 } }',
      { u: ticket.data.createDocumentUpload.uploadId },
    );
    expect(created.data.createDocument).toMatchObject({ filename: 'two-step.pdf', status: 'PENDING', sha256: sha256(pdf) });
    // A ticket is used once.
    const again = await graphql<unknown>(key, 'mutation($u: ID!) { createDocument(uploadId: $u) { id } }', { u: ticket.data.createDocumentUpload.uploadId });
    expect(again.errors?.[0].extensions).toMatchObject({ reason: 'document_upload_not_found' });
  });

  it('uploadDocumentBase64 for small files, with the duplicate id in the error extensions', async () => {
    const key = await freshKey();
    const content = Buffer.from('small graphql file ' + Date.now()).toString('base64');
    const mutation = 'mutation($f: String!, $c: String!) { uploadDocumentBase64(filename: $f, content: $c) { id mimeType status } }';
    const created = await graphql<{ uploadDocumentBase64: { id: string; mimeType: string } }>(key, mutation, { f: 'note.txt', c: content });
    expect(created.data.uploadDocumentBase64.mimeType).toBe('text/plain');
    const duplicate = await graphql<unknown>(key, mutation, { f: 'note.txt', c: content });
    expect(duplicate.errors?.[0].extensions).toMatchObject({ code: 'CONFLICT', reason: 'document_duplicate', existingId: created.data.uploadDocumentBase64.id });
    const refused = await graphql<unknown>(key, mutation, { f: 'x.pdf', c: elfBinary().toString('base64') });
    expect(refused.errors?.[0].extensions).toMatchObject({ reason: 'unsupported_document_type' });
  });
});

describe('GET /documents/:id/classify and PUT /documents/:id/category', () => {
  interface ClassificationBody {
    id: string;
    status: string;
    category: string | null;
    source: string | null;
    suggested: string | null;
    layer: string | null;
    confidence: number | null;
    runnersUp: { category: string; confidence: number }[];
    categoriesVersion: number | null;
    computedAt: string | null;
  }

  it('answers 202 until ready, then the stored result; a correction is kept; changed categories are classified again', async () => {
    const key = await freshKey();
    const created = await body<DocumentBody>(await multipart(key, Buffer.from('Invoice INV-77 for consulting services. Total due EUR 1.200,00. ' + Date.now()), 'bill.txt'), 201);
    const early = await platform.request(`/api/v1/documents/${created.id}/classify`, { key });
    if (early.status === 202) expect(await early.json()).toMatchObject({ id: created.id });
    else await early.text();
    await body(await settled(key, created.id), 200);

    const stored = await body<ClassificationBody>(await platform.request(`/api/v1/documents/${created.id}/classify`, { key }), 200);
    expect(stored).toMatchObject({ id: created.id, status: 'READY', categoriesVersion: expect.any(Number) });
    expect(['rule', 'classifier', 'zero-shot', 'none']).toContain(stored.layer);
    expect(stored.computedAt).not.toBeNull();
    // Asked again with nothing changed: the same stored answer, not a new computation.
    const again = await body<ClassificationBody>(await platform.request(`/api/v1/documents/${created.id}/classify`, { key }), 200);
    expect(again.computedAt).toBe(stored.computedAt);

    const corrected = await body<DocumentBody>(await platform.request(`/api/v1/documents/${created.id}/category`, { method: 'PUT', key, json: { category: 'Receipt' } }), 200);
    expect(corrected).toMatchObject({ category: 'receipt', categorySource: 'user' });
    await expectError(await platform.request(`/api/v1/documents/${created.id}/category`, { method: 'PUT', key, json: { category: 'nonsense' } }), 400, 'unknown_document_category');

    // A new category moves the account's categories version: the next GET classifies again.
    const newCategory = await platform.request('/graphql', { method: 'POST', key, json: { query: 'mutation { createDocumentCategory(name: "Consulting") { id } }' } });
    expect((await body<{ errors?: unknown }>(newCategory, 200)).errors).toBeUndefined();
    const recomputed = await body<ClassificationBody>(await platform.request(`/api/v1/documents/${created.id}/classify`, { key }), 200);
    expect(recomputed.categoriesVersion).toBeGreaterThan(stored.categoriesVersion!);
    expect(recomputed.computedAt).not.toBe(stored.computedAt);
    // The user's correction stays in force whatever the classifier now says.
    expect(recomputed).toMatchObject({ category: 'receipt', source: 'user' });
  });
});

describe('documents of a member', () => {
  it('files a document under a member of the account, filters by it, and refuses an unknown member', async () => {
    const key = await freshKey();
    const member = await body<{ id: string }>(await platform.request('/api/v1/members', { method: 'POST', key, json: { name: 'Jane Doe', email: `jane-${Date.now()}@example.org` } }), 201);
    const created = await body<DocumentBody>(await multipart(key, Buffer.from('Jane’s membership form ' + Date.now()), 'form.txt', { memberId: member.id }), 201);
    expect(created.memberId).toBe(member.id);
    await body<DocumentBody>(await multipart(key, Buffer.from('Nobody’s paper ' + Date.now()), 'other.txt'), 201);
    const hers = await body<{ data: DocumentBody[] }>(await platform.request(`/api/v1/documents?memberId=${member.id}`, { key }), 200);
    expect(hers.data.map((document) => document.id)).toEqual([created.id]);
    const error = await expectError(await multipart(key, Buffer.from('Orphan ' + Date.now()), 'orphan.txt', { memberId: '00000000-0000-4000-8000-ffffffffffff' }), 404, 'member_not_found');
    expect(error.param).toBe('memberId');
    // Another account's member is not this account's.
    const stranger = await freshKey();
    await expectError(await multipart(stranger, Buffer.from('Borrowed member ' + Date.now()), 'b.txt', { memberId: member.id }), 404, 'member_not_found');
  });
});
