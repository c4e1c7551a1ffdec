import { describe, expect, it } from 'vitest';
import { ChatAccessCaches } from '../../../subgraphs/membership/chat/chat-access-cache.js';

const ACCOUNT = '00000000-0000-4000-8000-000000000001';
const OTHER = '00000000-0000-4000-8000-000000000002';

describe('ChatAccessCaches', () => {
  it('answers only at the version its rows were read at; a later version drops them, an earlier one is not kept', () => {
    const cache = new ChatAccessCaches<string>().of(ACCOUNT, 'test');
    expect(cache.isAt(0n)).toBe(false);
    expect(cache.keepMembers(5n, [['a', 'row a']])).toBe(true);
    expect(cache.keepMemberships(5n, 'c1', [['a', true], ['b', false]])).toBe(true);
    expect(cache.isAt(5n)).toBe(true);
    expect([cache.member('a'), cache.membership('c1', 'a'), cache.membership('c1', 'b'), cache.membership('c1', 'x')]).toEqual(['row a', true, false, undefined]);
    // Rows read before the last change (a slower concurrent read) are not kept, and change nothing.
    expect(cache.keepMembers(4n, [['b', 'old b']])).toBe(false);
    expect(cache.member('b')).toBeUndefined();
    expect(cache.isAt(5n)).toBe(true);
    // Rows read after a change: everything kept before goes.
    expect(cache.keepMembers(6n, [['b', 'row b']])).toBe(true);
    expect(cache.isAt(5n)).toBe(false);
    expect([cache.member('a'), cache.member('b'), cache.membership('c1', 'a')]).toEqual([undefined, 'row b', undefined]);
  });

  it('keeps each account and mode apart: their counters are unrelated numbers', () => {
    const caches = new ChatAccessCaches<string>();
    caches.of(ACCOUNT, 'test').keepMembers(3n, [['a', 'test a']]);
    expect(caches.of(ACCOUNT, 'test')).toBe(caches.of(ACCOUNT, 'test'));
    for (const [account, mode] of [[ACCOUNT, 'live'], [OTHER, 'test']]) {
      const other = caches.of(account, mode);
      expect([other.isAt(3n), other.member('a')]).toEqual([false, undefined]);
      // Another scope moving on leaves the first one's rows alone.
      other.keepMembers(9n, [['a', `${mode} a`]]);
    }
    expect(caches.of(ACCOUNT, 'test').member('a')).toBe('test a');
    expect(caches.entries).toBe(3);
  });

  it('lets every scope go past its bound, and counts what a version change drops', () => {
    const caches = new ChatAccessCaches<number>(3);
    const first = caches.of(ACCOUNT, 'test');
    first.keepMembers(1n, [['a', 1], ['b', 2]]);
    first.keepMembers(2n, [['c', 3]]);
    expect(caches.entries).toBe(1);
    caches.of(OTHER, 'test').keepMembers(1n, [['d', 4], ['e', 5], ['f', 6]]);
    expect(caches.entries).toBe(4);
    // Past the bound: the rows offered are not kept, and everything kept goes.
    expect(first.keepMembers(2n, [['g', 7]])).toBe(false);
    expect([first.member('c'), caches.of(OTHER, 'test').member('d'), caches.entries]).toEqual([undefined, undefined, 0]);
    // A cache let go keeps nothing more; its scope starts afresh.
    expect(first.keepMembers(3n, [['h', 8]])).toBe(false);
    expect(caches.of(ACCOUNT, 'test')).not.toBe(first);
  });
});
