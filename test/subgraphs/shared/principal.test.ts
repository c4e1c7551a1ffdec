import { describe, expect, it } from 'vitest';
import { planOf, signClient, signPrincipal, verifyClient, verifyPrincipal, type Principal } from '../../../core/principal.js';

const secret = 'a'.repeat(40);
const principal: Principal = {
  accountId: '00000000-0000-4000-8000-000000000001',
  account: 'acme',
  keyId: 'key_1',
  kind: 'live',
  mode: 'live',
};

function messageOf(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return (error as Error).message;
  }
  return 'no error';
}

function codeOf(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return (error as { extensions?: { code?: string } }).extensions?.code;
  }
  return 'no error';
}

describe('signed principals', () => {
  it('round-trips a principal signed with the shared secret', () => {
    expect(verifyPrincipal(signPrincipal(principal, secret), secret)).toEqual(principal);
  });

  it('refuses a missing header', () => {
    expect(codeOf(() => verifyPrincipal(undefined, secret))).toBe('UNAUTHENTICATED');
  });

  it('refuses a principal signed with another secret', () => {
    expect(codeOf(() => verifyPrincipal(signPrincipal(principal, 'b'.repeat(40)), secret))).toBe('UNAUTHENTICATED');
  });

  it('refuses a payload changed after signing (another account)', () => {
    const [, signature] = signPrincipal(principal, secret).split('.');
    const forged = Buffer.from(JSON.stringify({ ...principal, account: 'evil', iat: Math.floor(Date.now() / 1000) })).toString('base64url');
    expect(codeOf(() => verifyPrincipal(`${forged}.${signature}`, secret))).toBe('UNAUTHENTICATED');
  });

  it('round-trips the plan of a text key, and a principal without one stays without one', () => {
    const text: Principal = { ...principal, keyId: 'key_2', kind: 'text', plan: 'pro' };
    expect(verifyPrincipal(signPrincipal(text, secret), secret)).toEqual(text);
    expect(verifyPrincipal(signPrincipal(principal, secret), secret)).not.toHaveProperty('plan');
  });

  it.each([
    ['changed', { plan: 'enterprise' }],
    ['added', { plan: 'enterprise' }],
    ['removed', { plan: undefined }],
  ])('refuses a payload whose plan was %s after signing', (how, change) => {
    const signed: Principal = how === 'added' ? { ...principal, kind: 'text' } : { ...principal, kind: 'text', plan: 'standard' };
    const header = signPrincipal(signed, secret);
    const [payload, signature] = header.split('.');
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<string, unknown>;
    const forged = Buffer.from(JSON.stringify({ ...claims, ...change })).toString('base64url');
    expect(forged).not.toBe(payload);
    expect(codeOf(() => verifyPrincipal(`${forged}.${signature}`, secret))).toBe('UNAUTHENTICATED');
  });

  it("planOf gives the key's plan, else the configuration's default", () => {
    expect(planOf({ plan: 'pro' }, 'standard')).toBe('pro');
    expect(planOf({}, 'standard')).toBe('standard');
  });

  it('refuses a signature older than five minutes', () => {
    const old = signPrincipal(principal, secret, Date.now() - 6 * 60 * 1000);
    expect(codeOf(() => verifyPrincipal(old, secret))).toBe('UNAUTHENTICATED');
  });

  it('refuses malformed headers', () => {
    for (const header of ['', 'abc', 'a.b.c', '.', 'not-base64.sig']) {
      expect(codeOf(() => verifyPrincipal(header, secret)), header).toBe('UNAUTHENTICATED');
    }
  });

  it('remembers a verified header but still refuses it once it is too old, and never under another secret', () => {
    const signedAt = Date.now();
    const header = signPrincipal(principal, secret, signedAt);
    expect(verifyPrincipal(header, secret, signedAt)).toEqual(principal);
    expect(verifyPrincipal(header, secret, signedAt + 60_000)).toEqual(principal);
    expect(codeOf(() => verifyPrincipal(header, secret, signedAt + 301_000))).toBe('UNAUTHENTICATED');
    expect(codeOf(() => verifyPrincipal(header, 'b'.repeat(40), signedAt))).toBe('UNAUTHENTICATED');
  });

  it('hands every caller its own principal object', () => {
    const header = signPrincipal(principal, secret);
    const first = verifyPrincipal(header, secret);
    (first as { account: string }).account = 'changed';
    expect(verifyPrincipal(header, secret)).toEqual(principal);
  });
});

describe('signed keyless callers', () => {
  const now = Date.UTC(2026, 10, 24, 12);

  it('round-trips the address the edge signed', () => {
    expect(verifyClient(signClient('203.0.113.7', secret, now), secret, now + 1_000)).toBe('203.0.113.7');
  });

  it('refuses a missing, malformed, forged or stale header, each in its own words', () => {
    const header = signClient('203.0.113.7', secret, now);
    const [payload, signature] = header.split('.');
    const other = Buffer.from(JSON.stringify({ keyless: true, address: '198.51.100.1', iat: Math.floor(now / 1000) })).toString('base64url');
    expect(messageOf(() => verifyClient(undefined, secret, now))).toBe('This service is reached only through the platform edge');
    expect(messageOf(() => verifyClient(`${payload}.${signature}.x`, secret, now))).toBe('Malformed client header');
    expect(messageOf(() => verifyClient(`${other}.${signature}`, secret, now))).toBe('Client header signature is invalid');
    expect(messageOf(() => verifyClient(signClient('203.0.113.7', 'b'.repeat(40), now), secret, now))).toBe('Client header signature is invalid');
    expect(messageOf(() => verifyClient(header, secret, now + 301_000))).toBe('Client header signature has expired');
    expect(codeOf(() => verifyClient(header, secret, now + 301_000))).toBe('UNAUTHENTICATED');
  });

  it('never takes a signed principal for a keyless caller, nor the reverse', () => {
    expect(messageOf(() => verifyClient(signPrincipal(principal, secret, now), secret, now))).toBe('Malformed client header');
    expect(messageOf(() => verifyPrincipal(signClient('203.0.113.7', secret, now), secret, now))).toBe('Malformed principal');
  });
});
