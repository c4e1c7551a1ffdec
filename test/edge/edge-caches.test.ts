import { describe, expect, it } from 'vitest';
import { PrincipalSigner, SIGNATURE_REUSE_MS } from '../../edge/federation/signing-data-source.js';
import { UpstreamClients } from '../../edge/interfaces/graphql/subscriptions/upstream-clients.js';
import { verifyPrincipal, type Principal } from '../../core/principal.js';

// What the edge reuses between requests to stay cheap (ARCHITECTURE.md, "What the edge caches"):
// each reuse must stay within what the rule it stands in for would allow.

const SECRET = 'edge-caches-test-secret';
const alice: Principal = { accountId: 'acc_1', account: 'alice', keyId: 'key_1', kind: 'live', mode: 'live' };

describe('the principal signer', () => {
  it('reuses a header for the same principal within the reuse window, and the subgraph accepts it', () => {
    const signer = new PrincipalSigner(SECRET);
    const start = Date.UTC(2026, 0, 1);
    const first = signer.sign(alice, start);
    expect(signer.sign(alice, start + SIGNATURE_REUSE_MS - 1)).toBe(first);
    // Verified at the last moment it may be sent: well inside the subgraphs' five minutes.
    expect(verifyPrincipal(first, SECRET, start + SIGNATURE_REUSE_MS - 1)).toEqual(alice);
  });

  it('signs again once the window has passed', () => {
    const signer = new PrincipalSigner(SECRET);
    const start = Date.UTC(2026, 0, 1);
    const first = signer.sign(alice, start);
    const later = signer.sign(alice, start + SIGNATURE_REUSE_MS + 1000);
    expect(later).not.toBe(first);
    expect(verifyPrincipal(later, SECRET, start + SIGNATURE_REUSE_MS + 1000)).toEqual(alice);
  });

  it('never hands one principal the header of another, nor of its own earlier state', () => {
    const signer = new PrincipalSigner(SECRET);
    const now = Date.UTC(2026, 0, 1);
    const test = { ...alice, mode: 'test' as const };
    const planned = { ...alice, kind: 'text' as const, plan: 'pro' };
    for (const principal of [alice, test, planned, { ...alice, keyId: 'key_2' }]) {
      expect(verifyPrincipal(signer.sign(principal, now), SECRET, now)).toEqual(principal);
    }
  });
});

describe('upstream subscription connections', () => {
  const urls = { membership: 'http://127.0.0.1:1/graphql' };

  it('are shared by the sockets of one principal and kept until the last lets go', async () => {
    const one = new UpstreamClients(urls, alice, SECRET);
    const two = new UpstreamClients(urls, { ...alice }, SECRET);
    const client = one.for('membership');
    expect(two.for('membership')).toBe(client);
    await one.dispose();
    // The other socket still holds it: a new socket of the principal gets the same connection.
    const three = new UpstreamClients(urls, alice, SECRET);
    expect(three.for('membership')).toBe(client);
    await two.dispose();
    await three.dispose();
    // All let go: the next socket opens a new one.
    const four = new UpstreamClients(urls, alice, SECRET);
    expect(four.for('membership')).not.toBe(client);
    await four.dispose();
  });

  it('are never shared between principals, nor between edges with different secrets', async () => {
    const mine = new UpstreamClients(urls, alice, SECRET);
    const other = new UpstreamClients(urls, { ...alice, keyId: 'key_2' }, SECRET);
    const elsewhere = new UpstreamClients(urls, alice, 'another-secret');
    expect(other.for('membership')).not.toBe(mine.for('membership'));
    expect(elsewhere.for('membership')).not.toBe(mine.for('membership'));
    await Promise.all([mine.dispose(), other.dispose(), elsewhere.dispose()]);
  });

  it('refuse a subgraph without a URL', () => {
    expect(() => new UpstreamClients(urls, alice, SECRET).for('nowhere')).toThrow(/No URL configured for subgraph "nowhere"/);
  });
});
