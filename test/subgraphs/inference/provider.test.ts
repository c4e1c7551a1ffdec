import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createInferenceSubgraph } from '../../../subgraphs/inference/index.js';
import type { Subgraph } from '../../../subgraphs/shared/subgraph.js';
import { createTestDatabase } from '../../support/database.js';
import { principalFor, run, TEST_SECRET } from '../../support/subgraph-harness.js';

let db: Awaited<ReturnType<typeof createTestDatabase>>;
let subgraph: Subgraph;
const statements: string[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  subgraph = await createInferenceSubgraph({
    databaseUrl: db.url,
    internalSecret: TEST_SECRET,
    onQuery: (sql) => statements.push(sql),
  });
});

afterAll(async () => {
  await subgraph?.close();
  await db?.drop();
});

const FIELDS = 'id name kind baseRestPath requiresKey status capabilities';

describe('providers', () => {
  it('lists the three providers of the specification, ordered by id', async () => {
    const result = await run(subgraph, principalFor(undefined, 'text'), `{ providers { ${FIELDS} } }`);
    expect(result.errors).toBeUndefined();
    expect(result.data!.providers).toEqual([
      {
        id: 'service-i',
        name: 'Service I',
        kind: 'IMAGE_AND_TEXT',
        baseRestPath: '/inference/image',
        requiresKey: true,
        status: 'OPERATIONAL',
        capabilities: ['chat', 'completion', 'tokenize', 'vision', 'txt2img', 'img2img', 'upscale'],
      },
      {
        id: 'service-i-proxy',
        name: 'Service I proxy',
        kind: 'IMAGE_AND_TEXT',
        baseRestPath: '/inference/proxy',
        requiresKey: false,
        status: 'OPERATIONAL',
        capabilities: ['chat', 'completion', 'tokenize', 'vision', 'txt2img', 'img2img', 'upscale'],
      },
      {
        id: 'service-t',
        name: 'Service T',
        kind: 'TEXT_AND_VISION',
        baseRestPath: '/inference/text',
        requiresKey: true,
        status: 'OPERATIONAL',
        capabilities: ['chat', 'completion', 'tokenize', 'vision'],
      },
    ]);
  });

  it('looks up one provider by id', async () => {
    const result = await run(subgraph, principalFor(undefined, 'text'), `query($id: ID!) { provider(id: $id) { ${FIELDS} } }`, {
      id: 'service-t',
    });
    expect(result.errors).toBeUndefined();
    expect(result.data!.provider).toMatchObject({ id: 'service-t', kind: 'TEXT_AND_VISION', requiresKey: true });
  });

  it('answers null for an unknown provider', async () => {
    const result = await run(subgraph, principalFor(undefined, 'text'), `query($id: ID!) { provider(id: $id) { id } }`, {
      id: 'provider_z',
    });
    expect(result.errors).toBeUndefined();
    expect(result.data!.provider).toBeNull();
  });

  it('shows text and image keys the same providers, and refuses membership keys', async () => {
    const text = await run(subgraph, principalFor('acct-text', 'text'), '{ providers { id } }');
    const image = await run(subgraph, principalFor('acct-image', 'image'), '{ providers { id } }');
    expect(text.data!.providers).toEqual(image.data!.providers);
    expect(text.data!.providers).toHaveLength(3);
    const live = await run(subgraph, principalFor('acct-live', 'live'), '{ providers { id } }');
    expect(live.errors?.[0].extensions).toMatchObject({ code: 'FORBIDDEN', reason: 'wrong_key_kind' });
  });

  it('resolves references from other subgraphs in one statement, null for unknown ids', async () => {
    statements.length = 0;
    const result = await run(
      subgraph,
      principalFor(undefined, 'text'),
      `query($representations: [_Any!]!) { _entities(representations: $representations) { ... on Provider { id name } } }`,
      {
        representations: [
          { __typename: 'Provider', id: 'service-t' },
          { __typename: 'Provider', id: 'nope' },
          { __typename: 'Provider', id: 'service-i-proxy' },
        ],
      },
    );
    expect(result.errors).toBeUndefined();
    expect(result.data!._entities).toEqual([
      { id: 'service-t', name: 'Service T' },
      null,
      { id: 'service-i-proxy', name: 'Service I proxy' },
    ]);
    expect(statements.filter((sql) => sql.includes('from "inference"."provider"'))).toHaveLength(1);
  });
});

describe('schema', () => {
  it('has migrations that match the entities exactly', async () => {
    expect(await subgraph.orm.schema.getUpdateSchemaSQL({ wrap: false, schema: subgraph.orm.config.get('schema') })).toBe('');
  });
});
