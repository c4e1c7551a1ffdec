import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Supergraph } from '@apollo/federation-internals';
import { describe, expect, it } from 'vitest';
import { GRAPHQL_ONLY } from '../../../edge/rest/graphql-only.js';
import { membershipRoutes } from '../../../edge/interfaces/membership/membership.routes.js';
import { tracerouteRoutes } from '../../../edge/interfaces/traceroute/traceroute.routes.js';

// A REST-only client can do what a GraphQL client does: every public operation of the graph has
// a REST route, or is on the short list of GraphQL-only operations with the reason (and the REST
// path that serves it, where one does).

const apiSchema = Supergraph.build(readFileSync(path.resolve(import.meta.dirname, '../../../schema/supergraph.graphql'), 'utf8'))
  .apiSchema()
  .toGraphQLJSSchema();

const operations = (['Query', 'Mutation', 'Subscription'] as const).flatMap((root) => {
  const type = root === 'Query' ? apiSchema.getQueryType() : root === 'Mutation' ? apiSchema.getMutationType() : apiSchema.getSubscriptionType();
  return Object.keys(type?.getFields() ?? {}).map((field) => `${root}.${field}`);
});
const routed = new Set([...Object.keys(membershipRoutes), ...Object.keys(tracerouteRoutes)]);

describe('REST covers the graph', () => {
  it('every public operation has a REST route or a documented reason not to', () => {
    expect(operations.length).toBeGreaterThan(100);
    expect(operations.filter((operation) => !routed.has(operation) && !(operation in GRAPHQL_ONLY))).toEqual([]);
  });

  it('the GraphQL-only list is short, exact and names nothing that has a route or is gone', () => {
    const listed = Object.keys(GRAPHQL_ONLY);
    expect(listed.filter((operation) => !operations.includes(operation))).toEqual([]);
    expect(listed.filter((operation) => routed.has(operation))).toEqual([]);
    // Short: a third of the graph at most, most of it the operators' areas and events.
    expect(listed.length).toBeLessThan(operations.length / 3);
  });
});
