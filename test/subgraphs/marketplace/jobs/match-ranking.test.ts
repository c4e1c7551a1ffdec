import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { membershipOrmOptions } from '../../../../subgraphs/membership/mikro-orm.config.js';
import { CANDIDATE_RANKING_SQL } from '../../../../subgraphs/membership/member/candidate-match.service.js';
import { anyTermQuerySql, pgArrayLiteral, rawScore } from '../../../../subgraphs/shared/match-score.js';
import { migrate, openOrm } from '../../../../core/orm.js';
import { createTestDatabase } from '../../../support/database.js';

// The ranking statement computes the costly text rank only for rows that can still reach the
// page; these tests compare it with ranking every row by the plain formula.
let db: Awaited<ReturnType<typeof createTestDatabase>>;
let client: pg.Client;
const ACCOUNT = '00000000-0000-4000-8000-00000000a11c';
const SKILLS = ['typescript', 'sql', 'go', 'rust', 'react', 'kafka', 'docker', 'python', 'excel', 'figma'];
const numbered = (text: string) => {
  let n = 0;
  return text.replace(/\?/g, () => `$${++n}`);
};

beforeAll(async () => {
  db = await createTestDatabase();
  const orm = await openOrm({ clientUrl: db.url, ...membershipOrmOptions });
  await migrate(orm, db.url, membershipOrmOptions.schema);
  await orm.close(true);
  client = new pg.Client({ connectionString: db.url });
  await client.connect();
  // 400 members with 1-5 skills and headlines from a few words, in a few cities; one archived, one of another mode.
  await client.query(
    `insert into membership.member (id, account_id, mode, name, email, joined_on, period_start, state, created_at, updated_at, city, headline, skills, deleted_at)
     select gen_random_uuid(), $1, case when i = 2 then 'test' else 'live' end, 'M' || i, 'm' || i || '@example.org', current_date, current_date, 'current', now(), now(),
            (array['Leeds', 'York', null])[1 + i % 3], (array['Backend engineer', 'Data analyst', 'Designer', 'Go developer', null])[1 + i % 5],
            array(select distinct ($2::text[])[1 + abs(hashtext(i || ':' || k)) % 10] from generate_series(1, 1 + i % 5) k),
            case when i = 3 then now() end
       from generate_series(1, 400) i`,
    [ACCOUNT, SKILLS],
  );
});

afterAll(async () => {
  await client?.end();
  await db?.drop();
});

interface Posting {
  title: string;
  skills: string[];
  location: string | null;
  remote: boolean;
}

async function pruned(posting: Posting, limit: number, offset: number): Promise<{ id: string; score: number }[]> {
  const { rows } = await client.query(numbered(CANDIDATE_RANKING_SQL), [
    pgArrayLiteral(posting.skills), `${posting.title} ${posting.skills.join(' ')}`, posting.location, posting.remote, ACCOUNT, 'live', limit + offset, limit, offset,
  ]);
  return rows.map((row) => ({ id: row.id, score: Number(row.score) }));
}

/** Every eligible member scored by rawScore, with PostgreSQL's ts_rank for the text. */
async function everyone(posting: Posting): Promise<{ id: string; score: number }[]> {
  const { rows } = await client.query(
    `select m.id, m.skills, nullif(concat_ws(', ', m.city, m.region, m.country), '') as location,
            ts_rank(to_tsvector('english', coalesce(m.headline, '') || ' ' || array_to_string(m.skills, ' ')), ${anyTermQuerySql('$2::text')}) as rank
       from membership.member m
      where m.account_id = $1 and m.mode = 'live' and m.deleted_at is null
        and (m.skills && $3::text[] or to_tsvector('english', coalesce(m.headline, '')) @@ ${anyTermQuerySql('$2::text')})`,
    [ACCOUNT, `${posting.title} ${posting.skills.join(' ')}`, pgArrayLiteral(posting.skills)],
  );
  return rows
    .map((row) => ({ id: row.id as string, score: rawScore({ requiredSkills: posting.skills, candidateSkills: row.skills, textRank: Number(row.rank), postingLocation: posting.location, remote: posting.remote, candidateLocation: row.location }) }))
    .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1));
}

describe('the candidate ranking statement', () => {
  it.each<[string, Posting]>([
    ['a posting asking for common skills', { title: 'Backend engineer', skills: ['typescript', 'sql', 'kafka'], location: 'Leeds', remote: false }],
    ['a remote posting', { title: 'Designer', skills: ['figma'], location: null, remote: true }],
    ['a posting matched by words only', { title: 'Data analyst', skills: ['cobol'], location: 'York', remote: false }],
  ])('pages %s exactly as ranking every member would', async (_label, posting) => {
    const expected = await everyone(posting);
    expect(expected.length).toBeGreaterThan(20);
    for (const [limit, offset] of [[10, 0], [10, 10], [7, 30], [50, 0]]) {
      const page = await pruned(posting, limit, offset);
      expect(page.map((row) => row.id)).toEqual(expected.slice(offset, offset + limit).map((row) => row.id));
      page.forEach((row, i) => expect(row.score).toBeCloseTo(expected[offset + i].score, 6));
    }
  });

  it('leaves out archived members and other modes', async () => {
    const everyoneIds = new Set((await pruned({ title: 'x', skills: SKILLS, location: null, remote: false }, 500, 0)).map((row) => row.id));
    const { rows } = await client.query(`select id from membership.member where deleted_at is not null or mode = 'test'`);
    expect(rows).toHaveLength(2);
    for (const row of rows) expect(everyoneIds.has(row.id)).toBe(false);
  });
});
