import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
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
    // Twice: built and checked the first time, executed from the kept statement the second.
    await findForReading(subgraph.orm.em.fork(), Member, scope, ORDER as never);
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
    await expect(findForReading(subgraph.orm.em.fork(), DocumentContent, {})).rejects.toThrow(/relations, filters or inheritance/);
  });

  it('build a shape once, check it against a fresh build, then only execute it, each time with its own values', async () => {
    const em = subgraph.orm.em.fork();
    const builds = vi.spyOn(em, 'createQueryBuilder');
    const named = (name: string) => findForReading(em, Member, { $and: [scope, { name: { $ilike: name } }] }, ORDER as never);
    expect((await named('reader 1')).map((m) => m.name)).toEqual(['Reader 1']);
    // The stand-ins' statement and the real one: built twice, for the check.
    expect(builds).toHaveBeenCalledTimes(2);
    expect((await named('reader 2')).map((m) => m.name)).toEqual(['Reader 2']);
    expect((await named('%reader%')).map((m) => m.name)).toEqual(['Reader 2', 'Reader 1', 'Reader 0']);
    expect(builds).toHaveBeenCalledTimes(2);
    builds.mockRestore();
  });

  it('tell shapes apart by nulls, booleans, list lengths, order and limit, and bind dates', async () => {
    const em = subgraph.orm.em.fork();
    const all = await findForReading(em, Member, scope, ORDER as never);
    const names = (rows: Member[]) => rows.map((m) => m.name);
    const read = (where: object, options: object = ORDER) => findForReading(em, Member, { $and: [scope, where] } as never, options as never);
    expect(names(await read({ periodEnd: null }))).toEqual(['Reader 1', 'Reader 0']);
    expect(names(await read({ periodEnd: '2000-01-31' }))).toEqual(['Reader 2']);
    expect(names(await read({ id: { $in: [all[0].id] } }))).toEqual(['Reader 2']);
    expect(names(await read({ id: { $in: [all[1].id, all[2].id] } }))).toEqual(['Reader 1', 'Reader 0']);
    expect(names(await read({}, { ...ORDER, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] }))).toEqual(['Reader 0', 'Reader 1', 'Reader 2']);
    expect(names(await read({}, { ...ORDER, limit: 1 }))).toEqual(['Reader 2']);
    expect(names(await read({}, { ...ORDER, limit: 2 }))).toEqual(['Reader 2', 'Reader 1']);
    expect(names(await read({ createdAt: { $lt: new Date(Date.UTC(2026, 0, 3)) } }))).toEqual(['Reader 1', 'Reader 0']);
    expect(names(await read({ createdAt: { $lt: new Date(Date.UTC(2026, 0, 2)) } }))).toEqual(['Reader 0']);
    // The same shapes again, now executed from the kept statements.
    expect(names(await read({ periodEnd: null }))).toEqual(['Reader 1', 'Reader 0']);
    expect(names(await read({ createdAt: { $lt: new Date(Date.UTC(2026, 0, 2)) } }))).toEqual(['Reader 0']);
    expect(names(await read({ id: { $in: [all[2].id, all[0].id] } }))).toEqual(['Reader 2', 'Reader 0']);
  });

  it('inside a transaction, read through it (uncommitted rows included) without keeping a statement', async () => {
    await subgraph.orm.em.fork().transactional(async (em) => {
      em.create(Member, { ...scope, name: 'Uncommitted', email: 'uncommitted@example.org', joinedOn: '2026-01-01', periodStart: '2026-01-01', periodEnd: null, graceEndsOn: null });
      await em.flush();
      const read = await findForReading(em, Member, { $and: [scope, { name: 'Uncommitted' }] } as never, ORDER as never);
      expect(read.map((m) => m.name)).toEqual(['Uncommitted']);
      throw Object.assign(new Error('roll back'), { rollback: true });
    }).catch((error: { rollback?: boolean }) => {
      if (!error.rollback) throw error;
    });
    expect(await findForReading(subgraph.orm.em.fork(), Member, { $and: [scope, { name: 'Uncommitted' }] } as never, ORDER as never)).toEqual([]);
  });
});
