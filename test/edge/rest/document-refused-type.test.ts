import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../support/platform-harness.js';

// A document of a type the platform does not file is 415 whatever its size: the subgraph refuses
// it after sniffing its first bytes, while the edge may still be sending the rest.

let platform: TestPlatform;
let key: string;

beforeAll(async () => {
  platform = await startTestPlatform();
  key = await platform.issueKey('acct-refused-type');
});

afterAll(async () => {
  await platform?.close();
});

function multipart(bytes: Buffer, filename: string): { body: Buffer; type: string } {
  const boundary = `----platform${randomBytes(8).toString('hex')}`;
  const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\nContent-Type: application/octet-stream\r\n\r\n`);
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  return { body: Buffer.concat([head, bytes, tail]), type: `multipart/form-data; boundary=${boundary}` };
}

describe('a document of a refused type', () => {
  for (const size of [4 * 1024, 2 * 1024 * 1024, 8 * 1024 * 1024]) {
    it(`of ${size} bytes is 415 unsupported_document_type, multipart and JSON alike`, async () => {
      // An executable's magic: sniffed as a type no document may be.
      const bytes = Buffer.concat([Buffer.from('7f454c46020101000000000000000000', 'hex'), randomBytes(size)]);
      const form = multipart(bytes, 'tool.bin');
      const response = await platform.request('/api/v1/documents/upload', { method: 'POST', key, headers: { 'content-type': form.type }, body: new Uint8Array(form.body) });
      expect(response.status).toBe(415);
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe('unsupported_document_type');
      if (size <= 2 * 1024 * 1024) {
        const json = await platform.request('/api/v1/documents/upload', { method: 'POST', key, json: { filename: 'tool.bin', content: bytes.toString('base64') } });
        expect(json.status).toBe(415);
      }
    });
  }
});
