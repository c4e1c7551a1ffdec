import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signTenderDocumentGrant } from '../../../subgraphs/marketplace/tender/tender-document-grant.js';
import { verifyTenderDocumentGrant } from '../../../subgraphs/membership/document-sharing/document-grant.js';
import { startTestPlatform, type TestPlatform } from '../../support/platform-harness.js';
import { body, expectError, tenderKit } from './tenders-support.js';

let platform: TestPlatform;
const kit = tenderKit(() => platform);

beforeAll(async () => {
  platform = await startTestPlatform();
}, 60_000);
afterAll(async () => {
  await platform?.close();
});

interface DocumentBody {
  id: string;
  tenderId: string;
  available: boolean;
  filename: string | null;
  mimeType: string | null;
  sizeBytes: number | null;
  sha256: string | null;
  contentBase64?: string | null;
}

async function upload(key: string, filename: string, text: string): Promise<string> {
  const created = await body<{ id: string }>(await kit.api('/documents/upload', key, { method: 'POST', json: { filename, content: Buffer.from(text).toString('base64') } }), 201);
  return created.id;
}

describe("a tender's documents", () => {
  it('are read by the buyer and by vendors who may bid, list and bytes; the buyer’s other documents stay closed', async () => {
    const buyer = await kit.party();
    const specification = 'Specification: resurface 3 km of road with 40 mm asphalt.';
    const specId = await upload(buyer.key, 'specification.txt', specification);
    const drawingsId = await upload(buyer.key, 'drawings.txt', 'Drawings of the junctions.');
    const privateId = await upload(buyer.key, 'salaries.txt', 'Internal: salaries of the procurement team.');
    const tender = await kit.tender(buyer.key, { json: { documents: [specId, drawingsId] } });
    const vendor = await kit.vendor();

    for (const reader of [buyer, vendor]) {
      const listed = await body<{ data: DocumentBody[]; hasMore: boolean; nextCursor: null }>(await kit.api(`/tenders/${tender.id}/documents`, reader.key), 200);
      expect(listed.hasMore).toBe(false);
      expect(listed.data.map((d) => [d.id, d.filename, d.available, d.tenderId])).toEqual([
        [specId, 'specification.txt', true, tender.id],
        [drawingsId, 'drawings.txt', true, tender.id],
      ]);
      const file = await body<DocumentBody>(await kit.api(`/tenders/${tender.id}/documents/${specId}`, reader.key), 200);
      expect(Buffer.from(file.contentBase64!, 'base64').toString()).toBe(specification);
      expect(file).toMatchObject({ id: specId, mimeType: 'text/plain', sizeBytes: Buffer.byteLength(specification), sha256: createHash('sha256').update(specification).digest('hex') });
    }

    // The vendor's own document routes do not open the buyer's documents, listed or not.
    for (const id of [specId, privateId]) {
      await expectError(await kit.api(`/documents/${id}`, vendor.key), 404, 'document_not_found');
      await expectError(await kit.api(`/documents/${id}/download`, vendor.key), 404, 'document_not_found');
    }
    // A document the tender does not list is not reachable through it.
    await expectError(await kit.api(`/tenders/${tender.id}/documents/${privateId}`, vendor.key), 404, 'tender_document_not_found');
    // Nor is the grant anywhere in a client's reach.
    const graphql = await platform.request('/graphql', { method: 'POST', key: vendor.key, json: { query: `query($id: ID!) { tenderDocuments(id: $id) { data { grant } } }`, variables: { id: tender.id } } });
    const refused = await body<{ errors: { message: string; extensions: { code: string } }[] }>(graphql, 400);
    expect(refused.errors[0]).toMatchObject({ message: 'Cannot query field "grant" on type "TenderDocument".', extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } });
  });

  it('are refused with 403 to who may not bid: no vendor, a vendor not approved, a vendor not invited to a selective tender', async () => {
    const buyer = await kit.party();
    const docId = await upload(buyer.key, 'terms.txt', 'Terms.');
    const invited = await kit.vendor();
    const selective = await kit.tender(buyer.key, { json: { documents: [docId], procurementMethod: 'SELECTIVE', invitedVendorIds: [invited.vendorId] } });
    const outsider = await kit.party();
    const pending = await kit.vendor({ approve: false });
    const uninvited = await kit.vendor();
    await expectError(await kit.api(`/tenders/${selective.id}/documents`, outsider.key), 403, 'vendor_not_registered');
    await expectError(await kit.api(`/tenders/${selective.id}/documents`, pending.key), 403, 'vendor_not_approved');
    await expectError(await kit.api(`/tenders/${selective.id}/documents/${docId}`, uninvited.key), 403, 'vendor_not_invited');
    expect((await body<{ data: DocumentBody[] }>(await kit.api(`/tenders/${selective.id}/documents`, invited.key), 200)).data.map((d) => d.id)).toEqual([docId]);
    // A test-mode vendor of the same account sees nothing of a live tender.
    const sandboxed = await kit.vendor({ kind: 'test', account: invited.account });
    await expectError(await kit.api(`/tenders/${selective.id}/documents`, sandboxed.key), 404, 'tender_not_found');
  });

  it('show a document the buyer deleted since as unavailable', async () => {
    const buyer = await kit.party();
    const docId = await upload(buyer.key, 'gone.txt', 'Soon gone.');
    const tender = await kit.tender(buyer.key, { json: { documents: [docId] } });
    await body(await kit.api(`/documents/${docId}`, buyer.key, { method: 'DELETE' }), 200);
    const vendor = await kit.vendor();
    expect((await body<{ data: DocumentBody[] }>(await kit.api(`/tenders/${tender.id}/documents`, vendor.key), 200)).data).toEqual([
      expect.objectContaining({ id: docId, available: false, filename: null }),
    ]);
  });
});

describe('tender document grants', () => {
  const grant = { tenderId: 't', documentId: 'd', accountId: 'a', mode: 'live' as const, expiresAt: Math.floor(Date.now() / 1000) + 60 };

  it('are read by membership exactly as the marketplace signs them', () => {
    expect(verifyTenderDocumentGrant('s'.repeat(32), signTenderDocumentGrant('s'.repeat(32), grant))).toEqual(grant);
  });

  it('are refused when signed with another secret, altered, or expired', () => {
    const signed = signTenderDocumentGrant('s'.repeat(32), grant);
    expect(verifyTenderDocumentGrant('t'.repeat(32), signed)).toBeNull();
    const [payload, signature] = signed.split('.');
    const altered = Buffer.from(JSON.stringify({ ...grant, accountId: 'other' })).toString('base64url');
    expect(verifyTenderDocumentGrant('s'.repeat(32), `${altered}.${signature}`)).toBeNull();
    expect(verifyTenderDocumentGrant('s'.repeat(32), `${payload}.${signature}.x`)).toBeNull();
    const expired = signTenderDocumentGrant('s'.repeat(32), { ...grant, expiresAt: Math.floor(Date.now() / 1000) - 1 });
    expect(verifyTenderDocumentGrant('s'.repeat(32), expired)).toBeNull();
  });
});
