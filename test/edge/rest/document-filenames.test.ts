import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../support/platform-harness.js';
import { SUBGRAPH_NAMES } from '../../../platform/config.js';
import { PRINCIPAL_HEADER, signPrincipal, type Principal } from '../../../core/principal.js';
import { TEST_SECRET } from '../../support/subgraph-harness.js';

// A document's file name, however it arrives (JSON with base64 content, a multipart form), is kept
// by one rule: its base name, without control characters; NUL is 400, never a 500 or an HTML page,
// and the name goes back in a Content-Disposition that no name can break.

let platform: TestPlatform;
let key: string;

beforeAll(async () => {
  platform = await startTestPlatform();
  key = await platform.issueKey('acct-filenames', 'live');
});

afterAll(async () => {
  await platform?.close();
});

let counter = 0;
/** Distinct text bytes each time, so that no upload is refused as a duplicate of another. */
const textBytes = () => Buffer.from(`file number ${++counter} of the filename tests\n`);

async function answer(response: Response): Promise<{ status: number; type: string; body: Record<string, unknown>; text: string }> {
  const text = await response.text();
  let body: Record<string, unknown> = {};
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    // Not JSON: the assertions on the content type show it.
  }
  return { status: response.status, type: response.headers.get('content-type') ?? '', body, text };
}

const uploadJson = (filename: string) =>
  platform.request('/api/v1/documents/upload', { method: 'POST', key, json: { filename, content: textBytes().toString('base64') } }).then(answer);

function uploadMultipart(filename: string) {
  const form = new FormData();
  form.append('file', new Blob([textBytes()], { type: 'text/plain' }), filename);
  return platform.request('/api/v1/documents/upload', { method: 'POST', key, body: form }).then(answer);
}

/** A multipart form written by hand, for file names FormData would escape. */
function uploadRawMultipart(dispositionParams: string) {
  const boundary = `----filename-test-${++counter}`;
  const body = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; ${dispositionParams}\r\nContent-Type: text/plain\r\n\r\n`, 'utf8'),
    textBytes(),
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  return platform.request('/api/v1/documents/upload', { method: 'POST', key, body, headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } }).then(answer);
}

const download = (id: unknown) => platform.request(`/api/v1/documents/${String(id)}/download`, { key });

function expectRefusedName(answered: Awaited<ReturnType<typeof answer>>) {
  expect(answered.status, answered.text).toBe(400);
  expect(answered.type).toMatch(/^application\/json/);
  expect(answered.body.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_parameter', param: 'filename' });
}

describe('NUL and control characters in a file name', () => {
  it('a NUL in a JSON upload\'s filename is 400 invalid_parameter naming filename, not 500', async () => {
    expectRefusedName(await uploadJson('report\u0000.txt'));
  });

  it('a NUL in a multipart upload\'s filename is 400 invalid_parameter too', async () => {
    expectRefusedName(await uploadRawMultipart(`filename*=UTF-8''report%00.txt`));
  });

  it('other control characters and lone surrogates are refused the same way', async () => {
    expectRefusedName(await uploadJson('line\nbreak.txt'));
    expectRefusedName(await uploadJson('bell\u0007.txt'));
    expectRefusedName(await uploadJson('half \ud800 pair.txt'));
  });

  it('the document stays uploadable after all of it', async () => {
    expect((await uploadJson('fine.txt')).status).toBe(201);
  });
});

describe('path names', () => {
  const NAMES: [given: string, kept: string][] = [
    ['../../../../etc/passwd', 'passwd'],
    ['/etc/passwd', 'passwd'],
    ['C:\\Users\\me\\report.txt', 'report.txt'],
    ['dir/sub\\mixed.txt', 'mixed.txt'],
    ['..', 'upload'],
    ['notes/..', 'upload'],
    ['plain name.txt', 'plain name.txt'],
  ];

  it.each(NAMES)('a JSON upload named %j is kept as %j', async (given, kept) => {
    const uploaded = await uploadJson(given);
    expect(uploaded.status, uploaded.text).toBe(201);
    expect(uploaded.body.filename).toBe(kept);
  });

  it.each(NAMES)('a multipart upload named %j is kept as %j', async (given, kept) => {
    const uploaded = await uploadRawMultipart(`filename*=UTF-8''${encodeURIComponent(given)}`);
    expect(uploaded.status, uploaded.text).toBe(201);
    expect(uploaded.body.filename).toBe(kept);
  });

  it('a path name goes back in Content-Disposition as its base name only', async () => {
    const uploaded = await uploadJson('../../../../etc/passwd');
    const response = await download(uploaded.body.id);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-disposition')).toBe(`attachment; filename="passwd"; filename*=UTF-8''passwd`);
  });

  it('a name longer than 255 characters is refused, whichever way it comes', async () => {
    const long = `${'n'.repeat(252)}.txt`;
    expectRefusedName(await uploadJson(long));
    expectRefusedName(await uploadMultipart(long));
    // Measured after the path goes: a long path to a short name is the short name.
    const uploaded = await uploadJson(`${'deep/'.repeat(80)}short.txt`);
    expect(uploaded.body.filename).toBe('short.txt');
  });
});

describe('Content-Disposition', () => {
  it('encodes any kept name safely: an ASCII fallback without quotes or separators, the exact name as RFC 6266 filename*', async () => {
    const name = 'Rechnung "März"; 100% fertig\u00e9 \u{1F4C4}.txt';
    // By hand: FormData writes a quote in a name as %22 (the HTML standard's escaping).
    const uploaded = await uploadRawMultipart(`filename*=UTF-8''${encodeURIComponent(name)}`);
    expect(uploaded.status, uploaded.text).toBe(201);
    expect(uploaded.body.filename).toBe(name);
    const disposition = (await download(uploaded.body.id)).headers.get('content-disposition')!;
    const [, fallback, encoded] = /^attachment; filename="([^"]*)"; filename\*=UTF-8''(\S+)$/.exec(disposition) ?? [];
    expect(fallback).toMatch(/^[\x20-\x7e]+$/);
    expect(fallback).not.toMatch(/["\\;%]/);
    expect(encoded).toMatch(/^[A-Za-z0-9!#$&+.^_`|~%-]+$/);
    expect(decodeURIComponent(encoded!)).toBe(name);
  });
});

describe('subgraph HTTP answers', () => {
  const principal: Principal = { accountId: '00000000-0000-4000-8000-000000000001', account: 'acct-filenames', keyId: 'key_test', kind: 'live', mode: 'live' };

  it('are JSON for a malformed body and an unknown path, never an HTML error page', async () => {
    for (const name of SUBGRAPH_NAMES) {
      const origin = new URL(platform.subgraphUrls[name]).origin;
      const malformed = await fetch(`${origin}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"query": ' }).then(answer);
      expect(malformed.status, `${name}: ${malformed.text}`).toBe(400);
      expect(malformed.type, name).toMatch(/^application\/json/);
      expect(malformed.body).toMatchObject({ errors: [{ extensions: { code: 'BAD_REQUEST' } }] });
      const signed = { [PRINCIPAL_HEADER]: signPrincipal({ ...principal, kind: name === 'inference' ? 'text' : name === 'traceroute' ? 'traceroute' : 'live' }, TEST_SECRET) };
      const unknown = await fetch(`${origin}/nowhere`, { headers: signed }).then(answer);
      expect(unknown.status, `${name}: ${unknown.text}`).toBe(404);
      expect(unknown.type, name).toMatch(/^application\/json/);
      expect(unknown.body).toMatchObject({ errors: [{ extensions: { code: 'NOT_FOUND' } }] });
    }
  });
});
