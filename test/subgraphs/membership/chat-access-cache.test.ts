import { describe, expect, it } from 'vitest';
import { ChatAccessCache } from '../../../subgraphs/membership/chat/chat-access-cache.js';

describe('ChatAccessCache', () => {
  it('answers only at the version its rows were read at; a later version drops them, an earlier one is not kept', () => {
    const cache = new ChatAccessCache<string>();
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

  it('lets everything go past its bound, and keeps its version', () => {
    const cache = new ChatAccessCache<number>(3);
    cache.keepMembers(1n, [['a', 1], ['b', 2], ['c', 3], ['d', 4]]);
    expect(cache.member('d')).toBe(4);
    cache.keepMemberships(1n, 'c1', [['a', true]]);
    expect([cache.member('a'), cache.member('d'), cache.membership('c1', 'a')]).toEqual([undefined, undefined, true]);
    expect(cache.isAt(1n)).toBe(true);
  });
});
