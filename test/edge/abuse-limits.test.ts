import { ApolloServer, HeaderMap } from '@apollo/server';
import { Supergraph } from '@apollo/federation-internals';
import { buildOperationNodeForField } from '@graphql-tools/utils';
import { getIntrospectionQuery, OperationTypeNode, parse, print, specifiedRules, validate } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_ABUSE_LIMITS, graphqlArmor, type AbuseLimits } from '../../edge/federation/abuse-limits.js';
import { readSupergraph } from '../../schema/supergraph.js';

const typeDefs = /* GraphQL */ `
  enum Status { ACTIVE LAPSED }
  type Node { id: ID! name: String! status: Status! child: Node children(first: Int): [Node!]! }
  type Query { node: Node nodes(first: Int, status: Status): [Node!]! }
`;
const node = (depth = 0): Record<string, unknown> => ({
  id: `n${depth}`,
  name: 'Node',
  status: 'ACTIVE',
  child: () => node(depth + 1),
  children: () => [node(depth + 1)],
});
const resolvers = { Query: { node: () => node(), nodes: () => [node(), node()] } };
const silent = { debug() {}, info() {}, warn() {}, error() {} };

interface Answer {
  status: number;
  body: { data?: any; errors?: { message: string; extensions?: Record<string, unknown> }[] };
}

async function startServer(limits: Partial<AbuseLimits> = {}, introspection = true) {
  const server = new ApolloServer({
    typeDefs,
    resolvers,
    introspection,
    logger: silent,
    ...graphqlArmor({ ...DEFAULT_ABUSE_LIMITS, ...limits }),
  });
  await server.start();
  return server;
}

async function post(server: ApolloServer, body: unknown): Promise<Answer> {
  const response = await server.executeHTTPGraphQLRequest({
    httpGraphQLRequest: { method: 'POST', headers: new HeaderMap([['content-type', 'application/json']]), search: '', body },
    context: async () => ({}),
  });
  if (response.body.kind !== 'complete') throw new Error('expected a complete body');
  return { status: response.status ?? 200, body: JSON.parse(response.body.string) };
}

const nested = (levels: number) => `{ node { ${'child { '.repeat(levels - 2)}id${' }'.repeat(levels - 2)} } }`;

let server: ApolloServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(async () => {
  await server?.stop();
});

function expectRefused(answer: Answer, reason: string) {
  expect(answer.status).toBe(400);
  expect(answer.body.data).toBeUndefined();
  expect(answer.body.errors).toHaveLength(1);
  expect(answer.body.errors![0].extensions).toMatchObject({ code: 'GRAPHQL_VALIDATION_FAILED', reason });
  expect(answer.body.errors![0].message).not.toMatch(/^Syntax Error/);
}

describe('graphqlArmor at its default limits', () => {
  it('runs an ordinary query', async () => {
    const answer = await post(server, { query: '{ node { id name child { id } } nodes(first: 10) { id status } }' });
    expect(answer.status).toBe(200);
    expect(answer.body.errors).toBeUndefined();
    expect(answer.body.data.node.child.id).toBe('n1');
  });

  it('runs a query exactly at the depth limit', async () => {
    const answer = await post(server, { query: nested(DEFAULT_ABUSE_LIMITS.maxDepth) });
    expect(answer.status).toBe(200);
    expect(answer.body.errors).toBeUndefined();
  });

  it('refuses a query one level deeper than the limit with 400 max_depth', async () => {
    const answer = await post(server, { query: nested(DEFAULT_ABUSE_LIMITS.maxDepth + 1) });
    expectRefused(answer, 'max_depth');
    expect(answer.body.errors![0].message).toBe(
      `Query depth limit of ${DEFAULT_ABUSE_LIMITS.maxDepth} exceeded, found ${DEFAULT_ABUSE_LIMITS.maxDepth + 1}.`,
    );
  });

  it('counts depth through fragments', async () => {
    const query = `{ node { ...A } } fragment A on Node { child { ...B } } fragment B on Node { child { child { child { child { id } } } } }`;
    expectRefused(await post(server, { query }), 'max_depth');
  });

  it('refuses more aliases than the limit with 400 max_aliases', async () => {
    const aliases = (n: number) => `{ ${Array.from({ length: n }, (_, i) => `a${i}: node { id }`).join(' ')} }`;
    expect((await post(server, { query: aliases(DEFAULT_ABUSE_LIMITS.maxAliases) })).status).toBe(200);
    expectRefused(await post(server, { query: aliases(DEFAULT_ABUSE_LIMITS.maxAliases + 1) }), 'max_aliases');
  });

  it('refuses a query costing more than the limit with 400 max_cost', async () => {
    // (2 + 1.5 * (1 + 1 + (2 + 1.5 * 2))) * 100 = 1250: shallow, few tokens, no aliases, but wide.
    const answer = await post(server, { query: '{ nodes(first: 100) { id name child { id name } } }' });
    expectRefused(answer, 'max_cost');
    expect(answer.body.errors![0].message).toBe(`Query Cost limit of ${DEFAULT_ABUSE_LIMITS.maxCost} exceeded, found 1250.`);
  });

  it('refuses a document of more tokens than the limit with 400 max_tokens, not 500', async () => {
    // Many cheap operations of 8 tokens (`query Qn { node { id } }`), the last padded with ids, so
    // that no other limit is reached first.
    const document = (tokens: number) => {
      const operations: string[] = [];
      for (let left = tokens; left > 0; ) {
        const extra = left >= 16 ? 0 : left - 8;
        operations.push(`query Q${operations.length} { node { id${' id'.repeat(extra)} } }`);
        left -= 8 + extra;
      }
      return operations.join('\n');
    };
    const atLimit = await post(server, { query: document(DEFAULT_ABUSE_LIMITS.maxTokens), operationName: 'Q0' });
    expect(atLimit.status).toBe(200);
    expect(atLimit.body.data.node.id).toBe('n0');
    const answer = await post(server, { query: document(DEFAULT_ABUSE_LIMITS.maxTokens + 1), operationName: 'Q0' });
    expectRefused(answer, 'max_tokens');
    expect(answer.body.errors![0].message).toBe(`Query token limit of ${DEFAULT_ABUSE_LIMITS.maxTokens} exceeded.`);
  });

  it('refuses more directives than the limit with 400 max_directives', async () => {
    // Each field takes @include and @skip once at most, so the directives need many fields.
    const fields = Array.from({ length: DEFAULT_ABUSE_LIMITS.maxDirectives / 2 + 1 }, () => 'id @include(if: true) @skip(if: false)');
    expectRefused(await post(server, { query: `{ node { ${fields.join(' ')} } }` }), 'max_directives');
  });

  it('refuses a batch of operations, which would multiply every limit', async () => {
    const answer = await post(server, [{ query: '{ node { id } }' }, { query: '{ node { id } }' }]);
    expect(answer.status).toBe(400);
    expect(answer.body.data).toBeUndefined();
  });

  it('lets a full introspection query through while introspection is on', async () => {
    const query = getIntrospectionQuery({ descriptions: true, specifiedByUrl: true, directiveIsRepeatable: true, inputValueDeprecation: true });
    const answer = await post(server, { query });
    expect(answer.status).toBe(200);
    expect(answer.body.data.__schema.queryType.name).toBe('Query');
  });

  it('hides field, argument, type and enum value suggestions', async () => {
    const messages = await Promise.all(
      [
        { query: '{ node { nam } }' },
        { query: '{ nodes(firts: 1) { id } }' },
        { query: 'query($s: Stats) { nodes(status: $s) { id } }' },
        { query: 'query($s: Status) { nodes(status: $s) { id } }', variables: { s: 'ACTIV' } },
      ].map(async (body) => {
        const answer = await post(server, body);
        expect(answer.status).toBe(400);
        return answer.body.errors![0].message;
      }),
    );
    expect(messages).toEqual([
      'Cannot query field "nam" on type "Node".',
      'Unknown argument "firts" on field "Query.nodes".',
      'Unknown type "Stats".',
      'Variable "$s" got invalid value "ACTIV"; Value "ACTIV" does not exist in "Status" enum.',
    ]);
  });
});

describe('graphqlArmor with introspection on', () => {
  it('keeps suggestions when told not to block them', async () => {
    const open = await startServer({ blockFieldSuggestions: false });
    try {
      const answer = await post(open, { query: '{ node { nam } }' });
      expect(answer.body.errors![0].message).toBe('Cannot query field "nam" on type "Node". Did you mean "name"?');
    } finally {
      await open.stop();
    }
  });
});

describe('graphqlArmor with introspection off', () => {
  it('refuses introspection with 400 introspection_disabled', async () => {
    const closed = await startServer({}, false);
    try {
      expectRefused(await post(closed, { query: '{ __schema { types { name } } }' }), 'introspection_disabled');
    } finally {
      await closed.stop();
    }
  });
});

describe('the default limits over the real API schema', () => {
  const schema = Supergraph.build(readSupergraph()).apiSchema().toGraphQLJSSchema();
  const { validationRules } = graphqlArmor(DEFAULT_ABUSE_LIMITS);
  const operations = (['query', 'mutation'] as const).flatMap((kind) => {
    const type = kind === 'query' ? schema.getQueryType()! : schema.getMutationType()!;
    return Object.keys(type.getFields()).map((field) => {
      const operation = buildOperationNodeForField({
        schema,
        kind: kind === 'query' ? OperationTypeNode.QUERY : OperationTypeNode.MUTATION,
        field,
        depthLimit: 10,
        circularReferenceDepth: 1,
      });
      return [`${type.name}.${field}`, print(operation)] as const;
    });
  });

  // Query.jobMatches answers a union of both matching directions, each a ranked page holding whole
  // postings or members: everything of both at once is past depth and cost on purpose. A client
  // asks one direction (below), which fits.
  const oneDirectionAtATime = new Set(['Query.jobMatches']);

  it.each(operations.filter(([name]) => !oneDirectionAtATime.has(name)))('accept %s with every field selected', (_name, query) => {
    expect(validate(schema, parse(query, { maxTokens: DEFAULT_ABUSE_LIMITS.maxTokens }), [...specifiedRules, ...validationRules])).toEqual([]);
  });

  it('accept Query.jobMatches asked in one direction with every score field and the matched objects', () => {
    for (const query of [
      '{ jobMatches(memberId: "m") { ... on MatchingMember { jobMatches { data { score components { skills text location } matchedSkills missingSkills reasons posting { id title skills location } } hasMore nextCursor } } } }',
      '{ jobMatches(jobId: "j") { ... on MatchingJob { candidateMatches { data { score components { skills text location } matchedSkills missingSkills reasons member { id name headline skills location } } hasMore nextCursor } } } }',
    ]) {
      expect(validate(schema, parse(query), [...specifiedRules, ...validationRules])).toEqual([]);
    }
  });
});
