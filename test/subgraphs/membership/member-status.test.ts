import { afterEach, describe, expect, it, vi } from 'vitest';
import { MemberStatus, memberStatusOf, today } from '../../../subgraphs/membership/member/member-status.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('today', () => {
  it('is the UTC calendar date of the instant given', () => {
    expect(today(new Date('2026-03-01T00:00:00.000Z'))).toBe('2026-03-01');
    expect(today(new Date('2026-02-28T23:59:59.999Z'))).toBe('2026-02-28');
    expect(today(new Date('1969-12-31T12:00:00.000Z'))).toBe('1969-12-31');
  });

  it('moves on at midnight UTC though the day it printed is remembered', () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2026-11-24T23:59:59.900Z'));
    expect(today()).toBe('2026-11-24');
    expect(today()).toBe('2026-11-24');
    vi.setSystemTime(new Date('2026-11-25T00:00:00.000Z'));
    expect(today()).toBe('2026-11-25');
    // A clock set back is followed too.
    vi.setSystemTime(new Date('2026-11-20T10:00:00.000Z'));
    expect(today()).toBe('2026-11-20');
  });

  it("gives a member's status by today's date when none is given", () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const member = { state: 'current' as const, periodEnd: '2026-11-24', graceEndsOn: '2026-12-08' };
    vi.setSystemTime(new Date('2026-11-24T12:00:00.000Z'));
    expect(memberStatusOf(member)).toBe(MemberStatus.ACTIVE);
    vi.setSystemTime(new Date('2026-11-25T00:00:01.000Z'));
    expect(memberStatusOf(member)).toBe(MemberStatus.GRACE);
    vi.setSystemTime(new Date('2026-12-09T00:00:01.000Z'));
    expect(memberStatusOf(member)).toBe(MemberStatus.LAPSED);
  });
});
