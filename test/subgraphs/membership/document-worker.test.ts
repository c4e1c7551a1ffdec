import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import type { EntityManager } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMembershipSubgraph, type MembershipTestbed } from '../../support/membership-subgraph.js';
import { principalFor } from '../../support/subgraph-harness.js';
import { corruptPdf, encryptedPdf, textPdf } from '../../support/document-fixtures.js';
import { DocumentExtractor } from '../../../subgraphs/membership/document-extraction/document-extractor.js';
import { DocumentClassificationService } from '../../../subgraphs/membership/document-classification/document-classification.service.js';
import { DocumentService } from '../../../subgraphs/membership/document/document.service.js';
import { DocumentWorker, type DocumentWorkerOptions } from '../../../subgraphs/membership/document/document.worker.js';
import { PostgresDocumentStorage, CHUNK_BYTES } from '../../../subgraphs/membership/document/postgres-document-storage.js';
import { DEFAULT_DOCUMENT_SETTINGS, type DocumentSettings } from '../../../subgraphs/membership/document/document-settings.js';
import type { DocumentTextExtractor } from '../../../subgraphs/membership/document/document-pipeline.js';
import { Document } from '../../../subgraphs/membership/document/document.entity.js';
import type { Principal } from '../../../core/principal.js';

let testbed: MembershipTestbed;
let extractor: DocumentExtractor;
const classifier = new DocumentClassificationService();
const settings: DocumentSettings = { ...DEFAULT_DOCUMENT_SETTINGS, workers: 2, retries: 2, timeLimitMs: 20_000 };

beforeAll(async () => {
  testbed = await startMembershipSubgraph({ documents: settings });
  extractor = new DocumentExtractor();
}, 60_000);

afterAll(async () => {
  await extractor?.close();
  await testbed?.close();
});

const em = (): EntityManager => testbed.subgraph.orm.em.fork() as EntityManager;
const serviceFor = (principal: Principal, own = em()) => new DocumentService(own, principal, settings, new PostgresDocumentStorage(own), classifier);
const worker = (options: Partial<DocumentWorkerOptions> & { settings?: DocumentSettings } = {}) =>
  new DocumentWorker(testbed.subgraph.orm, { settings, extractor, classifier, backoffMs: () => 0, trainingDebounceMs: 0, ...options });

async function upload(principal: Principal, bytes: Uint8Array, filename: string, category?: string): Promise<Document> {
  const service = serviceFor(principal);
  const staged = await service.stage(Readable.from([Buffer.from(bytes)]), filename);
  return service.createDocument({ uploadId: staged.uploadId, category } as never);
}

async function row(id: string): Promise<Document | null> {
  return em().findOne(Document, { id });
}

async function count(sql: string, params: unknown[] = []): Promise<number> {
  const [result] = await em().execute<{ n: string }[]>(sql, params);
  return Number(result.n);
}

/** Runs the worker until nothing is due (or the rounds run out). */
async function drain(target: DocumentWorker, rounds = 20): Promise<void> {
  for (let i = 0; i < rounds; i++) if ((await target.runOnce()) === 0) return;
}

describe('PostgresDocumentStorage', () => {
  it('writes 256 KiB chunks, reads the same bytes back, and keeps nothing of a stream that breaks', async () => {
    const storage = new PostgresDocumentStorage(em());
    const bytes = randomBytes(4 * CHUNK_BYTES + 3);
    // Odd-sized pieces, as a socket delivers them.
    const pieces = [bytes.subarray(0, 1000), bytes.subarray(1000, 300_000), bytes.subarray(300_000)];
    const stored = await storage.write(Readable.from(pieces));
    expect(stored.size).toBe(bytes.length);
    expect(await count(`select count(*) as n from "membership"."document_blob_chunk" where "blob_id" = ?`, [stored.ref])).toBe(5);
    const back: Buffer[] = [];
    for await (const chunk of storage.read(stored.ref)) back.push(chunk as Buffer);
    expect(Buffer.concat(back).equals(bytes)).toBe(true);

    const blobsBefore = await count(`select count(*) as n from "membership"."document_blob"`);
    async function* broken() {
      yield randomBytes(CHUNK_BYTES * 2);
      throw new Error('client went away');
    }
    await expect(storage.write(broken())).rejects.toThrow('client went away');
    expect(await count(`select count(*) as n from "membership"."document_blob"`)).toBe(blobsBefore);
    await storage.delete(stored.ref);
    expect(await count(`select count(*) as n from "membership"."document_blob_chunk" where "blob_id" = ?`, [stored.ref])).toBe(0);
  });
});

describe('DocumentWorker', () => {
  it('never processes one document twice when two workers poll the same queue', async () => {
    const principal = principalFor();
    const ids = [];
    for (let i = 0; i < 8; i++) ids.push((await upload(principal, Buffer.from(`Document number ${i} about the annual meeting ${randomBytes(4).toString('hex')}`), `n${i}.txt`)).id);
    const calls = new Map<string, number>();
    const counting = (): DocumentTextExtractor => ({
      extract: async (bytes, mime, signal) => {
        const key = Buffer.from(bytes).toString('utf8');
        calls.set(key, (calls.get(key) ?? 0) + 1);
        // Slow enough that both workers poll while the other's batch is in flight.
        await new Promise((resolve) => setTimeout(resolve, 30));
        return extractor.extract(bytes, mime, signal);
      },
      close: async () => undefined,
    });
    const a = worker({ extractor: counting() });
    const b = worker({ extractor: counting() });
    await Promise.all([drain(a), drain(b)]);
    expect(calls.size).toBe(8);
    expect([...calls.values()].every((n) => n === 1)).toBe(true);
    for (const id of ids) expect(await row(id)).toMatchObject({ status: 'ready', attempts: 1 });
  });

  it('takes over a document whose worker died once its lease runs out, and the dead worker cannot write over it', async () => {
    const principal = principalFor();
    const orphan = await upload(principal, Buffer.from('Claimed by a worker that died ' + Date.now()), 'orphan.txt');
    // A worker claimed it (lease "dead") and vanished; its lease has run out.
    await em().execute(
      `update "membership"."document" set "status" = 'processing', "attempts" = 1, "lease" = gen_random_uuid(), "locked_until" = now() - interval '1 second' where "id" = ?`,
      [orphan.id],
    );
    const [{ lease: deadLease }] = await em().execute<{ lease: string }[]>(`select "lease" from "membership"."document" where "id" = ?`, [orphan.id]);
    await drain(worker());
    expect(await row(orphan.id)).toMatchObject({ status: 'ready', attempts: 2, lease: null });
    // The dead worker's late write finds no row under its lease.
    const late = await em().execute<{ id: string }[]>(`update "membership"."document" set "status" = 'failed' where "id" = ? and "lease" = ? returning "id"`, [orphan.id, deadLease]);
    expect(late).toEqual([]);
  });

  it('starts on a document filed in its process at once, not at its next poll', async () => {
    const principal = principalFor();
    const sleepy = worker({ pollIntervalMs: 60_000 });
    sleepy.start();
    try {
      // Let its first poll find nothing and go to sleep for a minute.
      await new Promise((resolve) => setTimeout(resolve, 300));
      const filed = await upload(principal, Buffer.from('Wake the worker ' + Date.now()), 'wake.txt');
      const deadline = Date.now() + 15_000;
      while ((await row(filed.id))!.status !== 'ready' && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
      expect(await row(filed.id)).toMatchObject({ status: 'ready' });
    } finally {
      await sleepy.stop();
    }
  });

  it('retries a failed attempt after the backoff and succeeds, then fails for good after the last retry', async () => {
    const principal = principalFor();
    const flaky = await upload(principal, Buffer.from('A transient failure, then success ' + Date.now()), 'flaky.txt');
    let failures = 1;
    const failingOnce: DocumentTextExtractor = {
      extract: (bytes, mime, signal) => (failures-- > 0 ? Promise.reject(new Error('connection reset')) : extractor.extract(bytes, mime, signal)),
      close: async () => undefined,
    };
    const backoffs: number[] = [];
    // A backoff long enough that a stalled test machine still asks again before it ends.
    const retrying = worker({ extractor: failingOnce, backoffMs: (attempt) => (backoffs.push(attempt), 2000) });
    expect(await retrying.runOnce()).toBe(1);
    const waiting = await row(flaky.id);
    expect(waiting).toMatchObject({ status: 'pending', attempts: 1, failureReason: 'error', failureDetail: 'connection reset' });
    expect(waiting!.nextAttemptAt!.getTime()).toBeGreaterThan(Date.now() + 50);
    // Not due yet: nothing is claimed.
    expect(await retrying.runOnce()).toBe(0);
    // Until just past the time the row gives for the next attempt.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, waiting!.nextAttemptAt!.getTime() - Date.now()) + 50));
    expect(await retrying.runOnce()).toBe(1);
    expect(await row(flaky.id)).toMatchObject({ status: 'ready', attempts: 2, failureReason: null });
    expect(backoffs).toEqual([1]);

    const doomed = await upload(principal, Buffer.from('Always failing ' + Date.now()), 'doomed.txt');
    const failing: DocumentTextExtractor = { extract: () => Promise.reject(new Error('disk on fire')), close: async () => undefined };
    await drain(worker({ extractor: failing }));
    expect(await row(doomed.id)).toMatchObject({ status: 'failed', attempts: settings.retries + 1, failureReason: 'error', failureDetail: 'disk on fire' });
  });

  it('aborts an attempt at the time limit, with the signal passed to the extractor', async () => {
    const principal = principalFor();
    const slow = await upload(principal, Buffer.from('Too slow ' + Date.now()), 'slow.txt');
    let aborted = false;
    const hanging: DocumentTextExtractor = {
      extract: (_bytes, _mime, signal) =>
        new Promise((_, reject) => {
          signal?.addEventListener('abort', () => {
            aborted = true;
            reject(new Error('aborted'));
          });
        }),
      close: async () => undefined,
    };
    await drain(worker({ extractor: hanging, settings: { ...settings, timeLimitMs: 200, retries: 0 } }));
    expect(aborted).toBe(true);
    expect(await row(slow.id)).toMatchObject({ status: 'failed', failureReason: 'timeout', attempts: 1 });
  });

  it('fails corrupt and encrypted PDFs at once with the extractor’s reason, without retrying', async () => {
    const principal = principalFor();
    const corrupt = await upload(principal, corruptPdf(), 'corrupt.pdf');
    const encrypted = await upload(principal, encryptedPdf(), 'encrypted.pdf');
    await drain(worker());
    expect(await row(corrupt.id)).toMatchObject({ status: 'failed', failureReason: 'corrupt', attempts: 1 });
    expect(await row(encrypted.id)).toMatchObject({ status: 'failed', failureReason: 'encrypted', attempts: 1 });
  });

  it('stores pages, key fields and a search vector, and classifies after extraction', async () => {
    const principal = principalFor();
    const pdf = await upload(principal, await textPdf(), 'invoice.pdf');
    await drain(worker());
    const ready = await row(pdf.id);
    expect(ready).toMatchObject({ status: 'ready', pageCount: 2, extractionMethod: 'text-layer' });
    expect(ready!.classification).toMatchObject({ categoriesVersion: expect.any(Number) });
    expect(ready!.categoriesVersion).toBe(ready!.classification!.categoriesVersion);
    const [content] = await em().execute<{ pages: { text: string }[]; key_fields: { kind: string }[] }[]>(
      `select "pages", "key_fields" from "membership"."document_content" where "document_id" = ?`,
      [pdf.id],
    );
    expect(content.pages).toHaveLength(2);
    expect(content.key_fields.map((field) => field.kind)).toContain('iban');
    expect(await count(`select count(*) as n from "membership"."document" where "id" = ? and "search" @@ websearch_to_tsquery('english', 'invoice business')`, [pdf.id])).toBe(1);
  });
});

describe('categories', () => {
  it('keeps a user’s category over the classifier’s and trains the account’s classifier on the labelled documents', async () => {
    const principal = principalFor();
    const labelled = await upload(principal, Buffer.from('Employment agreement between the association and its new secretary ' + Date.now()), 'agreement.txt', 'Contract');
    expect(labelled).toMatchObject({ category: 'contract', categorySource: 'user' });
    const examples: { text: string; category: string }[][] = [];
    const recording = Object.assign(Object.create(classifier) as DocumentClassificationService, {
      train: (manager: EntityManager, scope: { accountId: string; mode: string }, given: { text: string; category: string }[]) => {
        examples.push(given);
        return classifier.train(manager, scope as never, given);
      },
    });
    const training = worker({ classifier: recording });
    await drain(training);
    expect(await row(labelled.id)).toMatchObject({ status: 'ready', category: 'contract', categorySource: 'user' });
    // The labelled document became a training example once its text existed.
    await training.train();
    expect(examples).toHaveLength(1);
    expect(examples[0]).toEqual([{ text: expect.stringContaining('Employment agreement'), category: 'contract' }]);

    const other = await upload(principal, Buffer.from('Minutes of the board meeting ' + Date.now()), 'minutes.txt');
    await drain(training);
    await serviceFor(principal).setCategory(other.id, 'REPORT');
    expect(await row(other.id)).toMatchObject({ category: 'report', categorySource: 'user' });
    await training.train();
    expect(examples[1].map((example) => example.category).sort()).toEqual(['contract', 'report']);
    // One training per burst of label changes: nothing is pending now.
    expect(await training.train()).toBe(0);
    await expect(serviceFor(principal).setCategory(other.id, 'no such category')).rejects.toMatchObject({ extensions: { reason: 'unknown_document_category' } });
  });
});

describe('purge', () => {
  it('purges trashed documents past the retention with their text and bytes, audited, and keeps younger ones', async () => {
    const principal = principalFor();
    const old = await upload(principal, Buffer.from('Old trash ' + Date.now()), 'old.txt');
    const recent = await upload(principal, Buffer.from('Recent trash ' + Date.now()), 'recent.txt');
    await drain(worker());
    await serviceFor(principal).trash(old.id);
    await serviceFor(principal).trash(recent.id);
    await em().execute(`update "membership"."document" set "deleted_at" = now() - interval '31 days' where "id" = ?`, [old.id]);
    expect(await worker().purgeTrash()).toBe(1);
    expect(await row(old.id)).toBeNull();
    expect(await row(recent.id)).not.toBeNull();
    expect(await count(`select count(*) as n from "membership"."document_content" where "document_id" = ?`, [old.id])).toBe(0);
    expect(await count(`select count(*) as n from "membership"."document_blob" where "id" = ?`, [old.blobId])).toBe(0);
    expect(await count(`select count(*) as n from "membership"."document_blob_chunk" where "blob_id" = ?`, [old.blobId])).toBe(0);
    const audit = await em().execute<{ action: string; key_id: string; account_id: string }[]>(
      `select "action", "key_id", "account_id" from "membership"."audit_event" where "entity" = 'document' and "entity_id" = ? order by "created_at"`,
      [old.id],
    );
    expect(audit.map((event) => event.action)).toEqual(['trashed', 'purged']);
    expect(audit[1]).toMatchObject({ key_id: 'system:document-worker', account_id: principal.accountId });
  });

  it('removes staged uploads never filed once they expire, with their bytes', async () => {
    const principal = principalFor();
    const staged = await serviceFor(principal).stage(Readable.from([Buffer.from('never filed')]), 'orphan.txt');
    const [upload] = await em().execute<{ blob_id: string }[]>(`select "blob_id" from "membership"."document_upload" where "id" = ?`, [staged.uploadId]);
    await em().execute(`update "membership"."document_upload" set "expires_at" = now() - interval '1 minute' where "id" = ?`, [staged.uploadId]);
    expect(await worker().purgeStaleUploads()).toBeGreaterThanOrEqual(1);
    expect(await count(`select count(*) as n from "membership"."document_upload" where "id" = ?`, [staged.uploadId])).toBe(0);
    expect(await count(`select count(*) as n from "membership"."document_blob" where "id" = ?`, [upload.blob_id])).toBe(0);
  });
});
