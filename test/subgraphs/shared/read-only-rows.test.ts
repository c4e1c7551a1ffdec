import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findForReading } from '../../../subgraphs/shared/read-only-rows.js';
import { Member } from '../../../subgraphs/membership/member/member.entity.js';
import { MemberStatus } from '../../../subgraphs/membership/member/member-status.js';
import { DocumentContent } from '../../../subgraphs/membership/document/document-content.entity.js';
import type { Subgraph } from '../../../subgraphs/shared/subgraph.js';
import { startMembershipSubgraph, type MembershipTestbed } from '../../support/membership-subgraph.js';

let subgraph: Subgraph;
let testbed: MembershipTestbed;
const scope = { accountId: '00000000-0000-4000-8000-00000000aaaa', mode: 'live' as const, deletedAt: null };

beforeAll(async () => {
  ({ subgraph } = testbed = await startMembershipSubgraph());
  const em = subgraph.orm.em.fork();
  const today = new Date().toISOString().slice(0, 10);
  for (let i = 0; i < 3; i++) {
    em.create(Member, {
      ...scope,
      name: `Reader ${i}`,
      email: `reader${i}@example.org`,
      city: i === 0 ? 'Lisbon' : null,
      country: i === 0 ? 'PT' : null,
      skills: ['go', `s${i}`],
      customFields: { tier: i, vip: i === 1 },
      joinedOn: today,
      periodStart: today,
      periodEnd: i === 2 ? '2000-01-31' : null,
      graceEndsOn: i === 2 ? '2000-02-14' : null,
      createdAt: new Date(Date.UTC(2026, 0, 1 + i)),
    });
  }
  await em.flush();
});

afterAll(async () => {
  await testbed?.close();
});

const ORDER = { orderBy: [{ createdAt: 'desc' as const }, { id: 'desc' as const }], limit: 10 };

describe('rows for reading only', () => {
  it('carry what em.find gives, value for value, with the entity getters working', async () => {
    const managed = await subgraph.orm.em.fork().find(Member, scope, ORDER as never);
    const read = await findForReading(subgraph.orm.em.fork(), Member, scope, ORDER as never);
    expect(read.map((m) => m.name)).toEqual(['Reader 2', 'Reader 1', 'Reader 0']);
    expect(read).toHaveLength(managed.length);
    for (const [i, member] of read.entries()) {
      expect(member).toBeInstanceOf(Member);
      for (const key of Object.keys(managed[i])) expect((member as unknown as Record<string, unknown>)[key], key).toEqual((managed[i] as unknown as Record<string, unknown>)[key]);
      expect(member.createdAt).toBeInstanceOf(Date);
      expect([member.status, member.location, member.livemode]).toEqual([managed[i].status, managed[i].location, managed[i].livemode]);
    }
    expect(read[2].location).toBe('Lisbon, PT');
    expect(read[0].status).toBe(MemberStatus.LAPSED);
    expect(read[1].customFields).toEqual({ tier: 1, vip: true });
  });

  it('stay out of the unit of work: nothing is tracked, nothing is flushed', async () => {
    const em = subgraph.orm.em.fork();
    const read = await findForReading(em, Member, scope, ORDER as never);
    expect(em.getUnitOfWork().getIdentityMap().values()).toHaveLength(0);
    read[0].name = 'Changed in memory';
    await em.flush();
    const stored = await subgraph.orm.em.fork().findOneOrFail(Member, { id: read[0].id });
    expect(stored.name).toBe('Reader 2');
  });

  it('refuse an entity with relations, which em.find would treat differently', async () => {
    await expect(findForReading(subgraph.orm.em.fork(), DocumentContent, {})).rejects.toThrow(/relations or filters/);
  });
});
