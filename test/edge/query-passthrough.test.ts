import { parse } from 'graphql';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { QueryPassthrough } from '../../edge/federation/query-passthrough.js';
import { SupergraphPlanning } from '../../edge/federation/supergraph-planning.js';
import { readSupergraph } from '../../schema/supergraph.js';

const planning = new SupergraphPlanning(readSupergraph());
const logger = pino({ level: 'silent' });

interface Sent {
  service: string;
  query: string;
  variables: Record<string, unknown>;
}

/** Data sources that record what they are sent and answer with `answer`. */
function services(answer: (sent: Sent) => Promise<{ data?: Record<string, unknown> | null; errors?: unknown[] }>) {
  const sent: Sent[] = [];
  const map = Object.fromEntries(
    ['membership', 'marketplace', 'inference', 'traceroute'].map((service) => [
      service,
      {
        process: async ({ request }: { request: { query?: string; variables?: Record<string, unknown> } }) => {
          const one = { service, query: request.query!, variables: { ...request.variables } };
          sent.push(one);
          return answer(one);
        },
      },
    ]),
  );
  return { sent, map: map as never };
}

function run(passthrough: QueryPassthrough, query: string, options: { variables?: Record<string, unknown>; operationName?: string } = {}) {
  const fullCalls: string[] = [];
  const executor = passthrough.executor(async (requestContext) => {
    fullCalls.push(requestContext.request.query!);
    return { data: { full: true } };
  });
  const document = parse(query);
  const result = executor({
    request: { query, variables: options.variables, operationName: options.operationName },
    document,
    operationName: options.operationName ?? null,
    context: { requestId: 'req_test' },
    metrics: {},
    logger,
    cache: undefined,
    overallCachePolicy: undefined,
  } as never);
  return { result, fullCalls };
}

describe('operations one subgraph answers exactly as asked', () => {
  it('are fetched once and answered with the subgraph data, without the gateway executor', async () => {
    const { sent, map } = services(async () => ({ data: { m: { id: 'a', name: 'Ada' } } }));
    const { result, fullCalls } = run(new QueryPassthrough(planning, map), 'query($id: ID!, $unused: Int) { m: member(id: $id) { id name } }', {
      variables: { id: 'a', unused: 3 },
    });
    expect(await result).toEqual({ data: { m: { id: 'a', name: 'Ada' } } });
    expect(fullCalls).toEqual([]);
    expect(sent).toHaveLength(1);
    expect(sent[0].service).toBe('membership');
    // Only the variables the fetch uses, as executeQueryPlan sends them.
    expect(sent[0].variables).toEqual({ id: 'a' });
  });

  it('go the gateway way from the answer already fetched when it has errors: paths and data as the gateway makes them', async () => {
    const { sent, map } = services(async () => ({
      data: { member: { id: 'a', phone: null } },
      errors: [{ message: 'phone failed', path: ['member', 'phone'], extensions: { code: 'INTERNAL_SERVER_ERROR' } }],
    }));
    const { result, fullCalls } = run(new QueryPassthrough(planning, map), '{ member(id: "a") { id phone } }');
    const answer = await result;
    expect(fullCalls).toEqual([]);
    expect(sent).toHaveLength(1);
    expect(answer.data).toEqual({ member: { id: 'a', phone: null } });
    expect(answer.errors?.[0]).toMatchObject({ message: 'phone failed', path: ['member', 'phone'] });
  });

  it('report a subgraph that cannot be reached as the gateway does, without sending again', async () => {
    const { sent, map } = services(async () => {
      throw Object.assign(new Error('A service of the platform is unavailable; try again shortly'), { extensions: { code: 'SERVICE_UNAVAILABLE' } });
    });
    const answer = await run(new QueryPassthrough(planning, map), '{ member(id: "a") { id } }').result;
    expect(sent).toHaveLength(1);
    expect(answer.data).toEqual({ member: null });
    expect(answer.errors?.[0]?.message).toBe('A service of the platform is unavailable; try again shortly');
  });

  it('refuse variables that do not coerce, as the gateway does, before fetching anything', async () => {
    const { sent, map } = services(async () => ({ data: {} }));
    const answer = await run(new QueryPassthrough(planning, map), 'query($id: ID!) { member(id: $id) { id } }', { variables: { id: { not: 'an id' } } }).result;
    expect(sent).toEqual([]);
    expect(answer.errors?.[0]?.message).toMatch(/\$id/);
  });

  it('leave to the gateway executor what needs more than one fetch or reshaping', async () => {
    const { sent, map } = services(async () => ({ data: {} }));
    const passthrough = new QueryPassthrough(planning, map);
    const full = [
      '{ member(id: "a") { name jobPostings { id } } }',
      '{ member(id: "a") { ...M } } fragment M on Member { name }',
      '{ __typename member(id: "a") { name } }',
      '{ __schema { queryType { name } } }',
    ];
    for (const query of full) {
      const { result, fullCalls } = run(passthrough, query);
      expect(await result, query).toEqual({ data: { full: true } });
      expect(fullCalls, query).toEqual([query]);
    }
    expect(sent).toEqual([]);
  });

  it('choose the named operation of a document with several', async () => {
    const { map } = services(async () => ({ data: { member: { name: 'Ada' } } }));
    const document = 'query A { member(id: "a") { name } } query B { member(id: "a") { name jobPostings { id } } }';
    const passthrough = new QueryPassthrough(planning, map);
    const a = run(passthrough, document, { operationName: 'A' });
    expect(await a.result).toEqual({ data: { member: { name: 'Ada' } } });
    expect(a.fullCalls).toEqual([]);
    const b = run(passthrough, document, { operationName: 'B' });
    await b.result;
    expect(b.fullCalls).toHaveLength(1);
  });
});
