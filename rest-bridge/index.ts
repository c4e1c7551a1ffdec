import type { ApolloServer } from '@apollo/server';
import { filterSchema, pruneSchema } from '@graphql-tools/utils';
import type { NextFunction, Request, Response as ExpressResponse } from 'express';
import type { DocumentNode, ExecutionResult, GraphQLFormattedError, GraphQLSchema, OperationDefinitionNode } from 'graphql';
import { useSofa } from 'sofa-api';
import type { EdgeContext } from '../gateway/edge-context.js';
import type { BridgeRoutes } from './bridge-routes.js';
import { restError, restErrorFromGraphQL, type RestErrorBody } from './errors.js';

type SofaConfig = Parameters<typeof useSofa>[0];

export interface RestBridgeOptions {
  /** Where the paths are mounted, e.g. /api/v1. */
  basePath: string;
  /** The gateway's API schema. */
  schema: GraphQLSchema;
  /** The gateway's Apollo server; every REST call is one operation on it. */
  apollo: ApolloServer<EdgeContext>;
  routes: BridgeRoutes;
  /** `Type.field` paths whose objects are expanded instead of being cut to `{id}`. */
  expanded?: string[];
  title: string;
  description: string;
}

function rootFieldOf(document: DocumentNode): string {
  const operation = document.definitions.find((d): d is OperationDefinitionNode => d.kind === 'OperationDefinition');
  const field = operation?.selectionSet.selections[0];
  return field && field.kind === 'Field' ? field.name.value : '';
}

/** Writes a WHATWG Response (what sofa answers) to Express's response. */
async function send(response: globalThis.Response, res: ExpressResponse): Promise<void> {
  res.status(response.status);
  response.headers.forEach((value, name) => {
    if (name !== 'content-length') res.setHeader(name, value);
  });
  res.end(Buffer.from(await response.arrayBuffer()));
}

/**
 * A sofa-api bridge serving one specification's REST paths on top of the gateway. GraphQL stays
 * the source of truth: each route runs one operation through the gateway's Apollo server with
 * the principal the edge authenticated, so REST and GraphQL cannot drift apart.
 */
export function createRestBridge(options: RestBridgeOptions) {
  const rootTypeOf: Record<string, string> = { Query: 'Query', Mutation: 'Mutation' };
  const byField = new Map(
    Object.entries(options.routes).map(([path, route]) => [path.split('.')[1], { ...route, graphqlPath: path }]),
  );
  // Sofa makes a route for every root field it sees: show it only the fields this spec maps.
  // Pruning drops the types no remaining field reaches, so the OpenAPI document shows only this spec.
  const schema = pruneSchema(
    filterSchema({
      schema: options.schema,
      rootFieldFilter: (operation, fieldName) => `${rootTypeOf[operation] ?? operation}.${fieldName}` in options.routes,
    }),
  );

  const execute = (async (args: { document: DocumentNode; variableValues?: Record<string, unknown> | null; contextValue: EdgeContext; operationName?: string | null }) => {
    const response = await options.apollo.executeOperation(
      { query: args.document, variables: args.variableValues ?? {}, operationName: args.operationName ?? undefined },
      { contextValue: args.contextValue },
    );
    if (response.body.kind !== 'single') throw new Error('Incremental delivery is not used by the REST bridge');
    const result = response.body.singleResult as ExecutionResult;
    const field = rootFieldOf(args.document);
    const route = byField.get(field);
    // A lookup that finds nothing is a 404 in REST, not `200 null`.
    if (!result.errors?.length && result.data && result.data[field] === null && route?.resource) {
      const id = args.variableValues?.id;
      const notFound: GraphQLFormattedError = {
        message: `No ${route.resource} with id "${String(id)}"`,
        extensions: { code: 'NOT_FOUND', param: 'id', reason: `${route.resource.replace(/ /g, '_')}_not_found` },
      };
      return { data: null, errors: [notFound] };
    }
    return result;
  }) as unknown as SofaConfig['execute'];

  const router = useSofa({
    basePath: options.basePath,
    schema,
    execute,
    routes: options.routes,
    ignore: options.expanded ?? [],
    depthLimit: 1,
    context: ({ req }: { req: Request }) => ({ principal: req.principal, requestId: String(req.id) }) as EdgeContext,
    errorHandler: (errors) => {
      // Sofa gives no request here; the handler below fills in request_id.
      const { status, body } = restErrorFromGraphQL(errors as GraphQLFormattedError[], '');
      return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json; charset=utf-8' } });
    },
    openAPI: { info: { title: options.title, version: '1.0.0', description: options.description } },
  } as SofaConfig & { context: unknown });

  return async (req: Request, res: ExpressResponse, next: NextFunction): Promise<void> => {
    try {
      // Sofa's webhook subscription routes are not part of any specification.
      if (req.path.startsWith(`${options.basePath}/webhook`)) {
        res.status(404).json(restError(404, { code: 'unknown_endpoint', message: `No endpoint ${req.method} ${req.path}` }, String(req.id)));
        return;
      }
      const response = (await router.handleNodeRequestAndResponse(req, res, { req, res })) as
        | globalThis.Response
        | undefined;
      // fets answers nothing (or an empty 404) for a path it has no route for.
      if (!response || (response.status === 404 && !response.headers.get('content-type'))) {
        res.status(404).json(restError(404, { code: 'unknown_endpoint', message: `No endpoint ${req.method} ${req.path}` }, String(req.id)));
        return;
      }
      if (response.status >= 400 && response.headers.get('content-type')?.includes('application/json')) {
        const body = (await response.json()) as RestErrorBody;
        if (body.error) body.error.request_id = String(req.id);
        res.status(response.status).json(body);
        return;
      }
      await send(response, res);
    } catch (error) {
      next(error);
    }
  };
}
