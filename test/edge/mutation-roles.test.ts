import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SUBGRAPH_PARTS } from '../../schema/subgraph-catalog.js';
import { publicMutationCalls, sessionKindFor, type MutationCall } from '../support/mutation-calls.js';
import { startTestPlatform, type TestPlatform } from '../support/platform-harness.js';

// Dashboard roles on /graphql, over every public mutation of the composed graph: a viewer runs
// none (FORBIDDEN, insufficient_role), a developer and an owner are never refused for their role.
// API keys carry no role and keep their rights.

const PASSWORD = 'correct horse battery';
const ROLES = ['viewer', 'developer', 'owner'] as const;
type Role = (typeof ROLES)[number];
interface Session {
  cookie: string;
  csrf: string;
}
type GraphQLBody = { data?: Record<string, unknown> | null; errors?: { message: string; extensions?: Record<string, unknown> }[] };

let platform: TestPlatform;
let key: string;
const sessions = {} as Record<Role, Session>;
const calls = publicMutationCalls();

/** A kind the mutation's subgraph serves it to; the role users are platform admins, so admin is open too. */
const kindFor = (call: MutationCall) => sessionKindFor(SUBGRAPH_PARTS.find((part) => part.name === call.subgraph)!, call.field);

async function signIn(email: string): Promise<Session> {
  const res = await platform.request('/dashboard/api/session', { method: 'POST', json: { email, password: PASSWORD } });
  expect(res.status).toBe(200);
  return { cookie: res.headers.getSetCookie()[0].split(';')[0], csrf: ((await res.json()) as { csrfToken: string }).csrfToken };
}

async function asSession(session: Session, query: string, variables: Record<string, unknown> = {}, kind = 'live'): Promise<GraphQLBody> {
  const res = await platform.request('/graphql', {
    method: 'POST',
    json: { query, variables },
    headers: { cookie: session.cookie, 'x-csrf-token': session.csrf, 'x-dashboard-kind': kind },
  });
  return (await res.json()) as GraphQLBody;
}

async function withKey(query: string, variables: Record<string, unknown> = {}): Promise<GraphQLBody> {
  return (await (await platform.request('/graphql', { method: 'POST', key, json: { query, variables } })).json()) as GraphQLBody;
}

const refusedForRole = (body: GraphQLBody) => body.errors?.some((error) => error.extensions?.reason === 'insufficient_role') ?? false;

beforeAll(async () => {
  platform = await startTestPlatform();
  for (const role of ROLES) {
    await platform.createDashboardUser({ account: 'acme', email: `${role}@example.com`, password: PASSWORD, role, platformAdmin: true });
    sessions[role] = await signIn(`${role}@example.com`);
  }
  key = await platform.issueKey('acme', 'live');
});
afterAll(async () => {
  await platform?.close();
});

describe('roles on every public mutation, with a dashboard session', () => {
  it('covers the whole graph: every subgraph has mutations in the list', () => {
    expect(calls.length).toBeGreaterThan(60);
    expect(new Set(calls.map((call) => call.subgraph))).toEqual(new Set(SUBGRAPH_PARTS.map((part) => part.name)));
  });

  it('a viewer is refused every mutation with FORBIDDEN, reason insufficient_role, and no data', async () => {
    const wrong: string[] = [];
    for (const call of calls) {
      const body = await asSession(sessions.viewer, call.query, call.variables, kindFor(call));
      const error = body.errors?.[0];
      if (error?.extensions?.code !== 'FORBIDDEN' || error.extensions.reason !== 'insufficient_role' || body.data?.[call.field] != null) {
        wrong.push(`${call.field}: ${JSON.stringify(body).slice(0, 300)}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it.each(['developer', 'owner'] as const)('the %s role is refused no mutation', async (role) => {
    const refused: string[] = [];
    let answered = 0;
    for (const call of calls) {
      const body = await asSession(sessions[role], call.query, call.variables, kindFor(call));
      if (refusedForRole(body)) refused.push(call.field);
      if (body.data?.[call.field] != null) answered += 1;
    }
    expect(refused).toEqual([]);
    // The calls reached their resolvers: those whose sample arguments make sense did their work.
    expect(answered).toBeGreaterThan(0);
  });
});

describe('what a viewer cannot change', () => {
  const MEMBERS = '{ members(limit: 100) { data { id } } }';
  const INVOICES = '{ invoices(limit: 100) { data { id } } }';
  const CREATE_MEMBER = 'mutation($name: String!, $email: String!) { createMember(name: $name, email: $email) { id } }';

  it('createMember, createInvoice and deleteMember with valid arguments change nothing', async () => {
    const created = await withKey(CREATE_MEMBER, { name: 'Ada', email: 'ada@example.org' });
    expect(created.errors).toBeUndefined();
    const memberId = (created.data!.createMember as { id: string }).id;
    const before = { members: await withKey(MEMBERS), invoices: await withKey(INVOICES) };

    const attempts = [
      [CREATE_MEMBER, { name: 'Bob', email: 'bob@example.org' }],
      [
        'mutation($memberId: ID!) { createInvoice(memberId: $memberId, currency: "EUR", lines: [{ description: "Fee", unitAmount: 1000 }]) { id } }',
        { memberId },
      ],
      ['mutation($id: ID!) { deleteMember(id: $id) { id } }', { id: memberId }],
    ] as const;
    for (const [query, variables] of attempts) {
      const body = await asSession(sessions.viewer, query, variables);
      expect(body.errors?.[0].extensions).toMatchObject({ code: 'FORBIDDEN', reason: 'insufficient_role' });
    }

    expect(await withKey(MEMBERS)).toEqual(before.members);
    expect(await withKey(INVOICES)).toEqual(before.invoices);
    // The same calls from a developer do what they say.
    const invoice = await asSession(sessions.developer, attempts[1][0], attempts[1][1]);
    expect(invoice.errors).toBeUndefined();
  });
});

describe('API keys carry no role', () => {
  it('keep every right on REST and on /graphql', async () => {
    const rest = await platform.request('/api/v1/members', { method: 'POST', key, json: { name: 'Cy', email: 'cy@example.org' } });
    expect(rest.status).toBe(201);
    const { id } = (await rest.json()) as { id: string };
    expect((await platform.request(`/api/v1/members/${id}`, { method: 'DELETE', key })).status).toBe(200);
    const graph = await withKey('mutation { createMemberCategory(name: "Students", feeAmount: 0, currency: "EUR", period: MONTHLY) { id } }');
    expect(graph.errors).toBeUndefined();
  });
});
