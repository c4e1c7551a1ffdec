import { describe, expect, it } from 'vitest';
import { createLogger, redactRequest, redactResponse, redactUrl, withoutCredentialParams } from '../../core/logger.js';

describe('redactUrl', () => {
  it.each([
    ['/v1/public/traces?api_key=trk_abc&limit=5', '/v1/public/traces?api_key=[redacted]&limit=5'],
    ['/x?limit=5&API_KEY=trk_abc', '/x?limit=5&API_KEY=[redacted]'],
    ['/x?api%5Fkey=trk_abc&token=t&key=k&access_token=a', '/x?api%5Fkey=[redacted]&token=[redacted]&key=[redacted]&access_token=[redacted]'],
    ['/x?api_key[]=a&api_key[0]=b', '/x?api_key[]=[redacted]&api_key[0]=[redacted]'],
    ['/x?monkey=1&keys=2&api_key', '/x?monkey=1&keys=2&api_key'],
    ['/x?a=%zz&api_key=s#frag', '/x?a=%zz&api_key=[redacted]#frag'],
    ['/x', '/x'],
  ])('%s', (url, expected) => {
    expect(redactUrl(url)).toBe(expected);
  });
});

describe('withoutCredentialParams', () => {
  it('keeps every other parameter, repeated ones and their order included', () => {
    const kept = withoutCredentialParams(new URLSearchParams('format=csv&api_key=s&limit=1&Token=t&status=failed&status=completed'));
    expect(kept.toString()).toBe('format=csv&limit=1&status=failed&status=completed');
  });
});

describe('redactRequest', () => {
  it('replaces credential headers and query values in a copy, leaving the live request alone', () => {
    const headers = { authorization: 'Bearer sk_live_x', 'x-api-key': 'trk_x', cookie: 's=1', accept: '*/*' };
    const logged = redactRequest({ url: '/a?api_key=trk_x', headers, query: { api_key: 'trk_x', limit: '1' } });
    expect(logged).toEqual({
      url: '/a?api_key=[redacted]',
      headers: { authorization: '[redacted]', 'x-api-key': '[redacted]', cookie: '[redacted]', accept: '*/*' },
      query: { api_key: '[redacted]', limit: '1' },
    });
    expect(headers.authorization).toBe('Bearer sk_live_x');
  });
});

describe('redactResponse', () => {
  it('replaces the cookies a response sets, in a copy', () => {
    const headers = { 'set-cookie': ['dash_session=s3cret; HttpOnly'], 'content-type': 'application/json' };
    expect(redactResponse({ statusCode: 200, headers })).toEqual({ statusCode: 200, headers: { 'set-cookie': '[redacted]', 'content-type': 'application/json' } });
    expect(headers['set-cookie']).toEqual(['dash_session=s3cret; HttpOnly']);
  });
});

describe('createLogger', () => {
  it('redacts credentials in what is logged by hand: request and response headers, bodies, and the body an error kept', () => {
    const lines: string[] = [];
    const logger = createLogger('info', 'test', { write: (line: string) => void lines.push(line) });
    // body-parser's SyntaxError keeps the text it could not parse.
    const parseError = Object.assign(new SyntaxError('Unexpected end of JSON input'), { body: '{"password":"pw-in-error"', status: 400 });
    logger.info({ req: { headers: { 'x-csrf-token': 'csrf-by-hand', cookie: 'dash_session=c' }, body: { password: 'pw-in-body' } } }, 'by hand');
    logger.info({ res: { headers: { 'set-cookie': 'dash_session=set-by-hand' } } }, 'by hand');
    logger.error({ err: parseError }, 'failed');
    const written = lines.join('\n');
    for (const secret of ['csrf-by-hand', 'dash_session=', 'pw-in-body', 'pw-in-error']) expect(written).not.toContain(secret);
    expect(JSON.parse(lines[2]).err).toMatchObject({ message: 'Unexpected end of JSON input', body: '[redacted]', status: 400 });
  });
});
