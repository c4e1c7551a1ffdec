import { describe, expect, it } from 'vitest';
import { graphqlInterface } from '../../edge/interfaces/graphql/graphql.keys.js';
import { membershipInterface } from '../../edge/interfaces/membership/membership.keys.js';
import { serviceTInterface } from '../../edge/interfaces/inference/inference.keys.js';
import { tracerouteInterface } from '../../edge/interfaces/traceroute/traceroute.keys.js';
import { RateLimiter } from '../../edge/access/rate-limiter.js';
import type { KeyKind, Principal } from '../../core/principal.js';

const LIMITS = { livePerMinute: 5, testPerMinute: 5, inferencePerMinute: 5, anonymousPerMinute: 2 };

function principal(kind: KeyKind, keyId: string, accountId = 'acct-1'): Principal {
  return { accountId, account: 'acct', keyId, kind, mode: kind === 'test' ? 'test' : 'live' };
}

describe('whose count a request is', () => {
  it('is the account and mode for membership keys, the key for other kinds, the address without a key', () => {
    const edge = graphqlInterface(LIMITS);
    const subjects = (p: Principal | undefined, address?: string) => edge.windows(p, undefined, address).map((window) => window.subject);
    expect(subjects(principal('live', 'key_a'))).toEqual(['account:acct-1:live']);
    expect(subjects(principal('test', 'key_b'))).toEqual(['account:acct-1:test']);
    expect(subjects(principal('traceroute', 'key_c'))).toEqual(['key:key_c', 'key:key_c']);
    expect(subjects(principal('text', 'key_d'))).toEqual(['key:key_d']);
    expect(subjects(principal('admin', 'key_e'))).toEqual(['key:key_e']);
    expect(subjects(undefined, '203.0.113.9')).toEqual(['ip:203.0.113.9']);
  });

  it('is the same on every interface', () => {
    const live = principal('live', 'key_a');
    for (const edge of [membershipInterface(LIMITS), tracerouteInterface(LIMITS), serviceTInterface(LIMITS)]) {
      expect(edge.windows(live, undefined, '203.0.113.9').map((window) => window.subject), edge.name).toEqual(['account:acct-1:live']);
      expect(edge.windows(undefined, undefined, '203.0.113.9').map((window) => window.subject), edge.name).toEqual(['ip:203.0.113.9']);
    }
  });

  it('names clients whose address is unknown as such, never `ip:undefined`', async () => {
    const [window] = graphqlInterface(LIMITS).windows(undefined, undefined, undefined);
    expect(window.subject).toBe('ip:unknown');
    // They share that one bucket; a known address keeps its own.
    const limiter = new RateLimiter();
    await limiter.hit([window]);
    await limiter.hit([window]);
    expect((await limiter.hit([window]))[0].exceeded).toBe(true);
    expect((await limiter.hit(graphqlInterface(LIMITS).windows(undefined, undefined, '203.0.113.9')))[0].exceeded).toBe(false);
  });
});
