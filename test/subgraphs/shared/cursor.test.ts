import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { cursorParts, decodeTimeCursor, encodeCursor, encodeTimeCursor } from '../../../subgraphs/shared/cursor.js';
import { escapeLike } from '../../../subgraphs/shared/like.js';

describe('the cursor codec', () => {
  it('reads back what it wrote', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.string(), fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.constant(null))), (parts) => {
        expect(cursorParts(encodeCursor(parts))).toEqual(parts.map((part) => (Object.is(part, -0) ? 0 : part)));
      }),
    );
  });

  it('reads a time cursor back to the same instant and id', () => {
    const at = new Date('2026-11-23T10:00:00.123Z');
    const id = '0190f5c4-7e3a-7c2b-9d1e-5f6a7b8c9d0e';
    expect(decodeTimeCursor(encodeTimeCursor(at, id))).toEqual({ at, id });
  });

  it.each([
    ['junk', 'not a cursor'],
    ['base64 of a non-array', Buffer.from('"hello"').toString('base64url')],
    ['an array of the wrong length', encodeCursor(['2026-01-01T00:00:00.000Z'])],
    ['a bad date', encodeCursor(['yesterday', '0190f5c4-7e3a-7c2b-9d1e-5f6a7b8c9d0e'])],
    ['a bad id', encodeCursor(['2026-01-01T00:00:00.000Z', 'nope'])],
    ['a number for the time', encodeCursor([1, '0190f5c4-7e3a-7c2b-9d1e-5f6a7b8c9d0e'])],
  ])('refuses %s as a time cursor', (_what, cursor) => {
    expect(decodeTimeCursor(cursor)).toBeUndefined();
  });

  it('never throws on any string', () => {
    fc.assert(fc.property(fc.string(), (text) => void cursorParts(text)));
  });
});

describe('the LIKE escape', () => {
  it('escapes the wildcards and the escape character, nothing else', () => {
    expect(escapeLike('50%_off\\now')).toBe('50\\%\\_off\\\\now');
    expect(escapeLike('plain text')).toBe('plain text');
  });
});
