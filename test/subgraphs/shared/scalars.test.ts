import { describe, expect, it } from 'vitest';
import { Kind } from 'graphql';
import { DateTimeResolver, LocalDateResolver } from '../../../subgraphs/shared/scalars.js';

describe('LocalDate', () => {
  it('serialises a calendar date, the same again once remembered', () => {
    expect(LocalDateResolver.serialize('2026-11-24')).toBe('2026-11-24');
    expect(LocalDateResolver.serialize('2026-11-24')).toBe('2026-11-24');
  });

  it('still refuses what is not a calendar date, however many dates passed before', () => {
    // Past the 4,096 it remembers, so the set has been cleared once on the way.
    for (let day = 0; day < 5000; day++) LocalDateResolver.serialize(new Date(Date.UTC(2000, 0, 1) + day * 86_400_000).toISOString().slice(0, 10));
    for (const bad of ['2020-02-30', '2020-13-01', '20-01-01', 'today', '']) {
      expect(() => LocalDateResolver.serialize(bad), bad).toThrow(/LocalDate/);
      // A refused value is not remembered as passed.
      expect(() => LocalDateResolver.serialize(bad), bad).toThrow(/LocalDate/);
    }
    expect(() => LocalDateResolver.serialize(20200101)).toThrow();
  });

  it('refuses years outside 0001 to 9999 as input', () => {
    expect(() => LocalDateResolver.parseValue('0000-01-01')).toThrow(/between 0001-01-01 and 9999-12-31/);
    expect(() => LocalDateResolver.parseLiteral({ kind: Kind.STRING, value: '0000-12-31' })).toThrow(/between/);
    expect(LocalDateResolver.parseValue('0001-01-01')).toBe('0001-01-01');
  });
});

describe('DateTime', () => {
  it('refuses an instant outside the storable years', () => {
    expect(() => DateTimeResolver.parseValue('0000-06-01T00:00:00Z')).toThrow(/between/);
    // graphql-scalars hands the Date on; it is written out as RFC 3339 in UTC.
    expect(JSON.stringify(DateTimeResolver.serialize(new Date('2026-11-24T01:02:03.000Z')))).toBe('"2026-11-24T01:02:03.000Z"');
  });
});
