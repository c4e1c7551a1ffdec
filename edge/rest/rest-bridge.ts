import type { ApolloServer } from '@apollo/server';
import type { QueryPassthrough } from '../federation/query-passthrough.js';
import { filterSchema, pruneSchema } from '@graphql-tools/utils';
import express, { type NextFunction, type Request, type Response as ExpressResponse } from 'express';
import { print, type DocumentNode, type ExecutionResult, type GraphQLFormattedError, type GraphQLSchema, type OperationDefinitionNode } from 'graphql';
import { createSofa, createSofaRouter } from 'sofa-api';
import type { EdgeContext } from '../../core/edge-context.js';
import type { BridgeRoutes } from './bridge-routes.js';
import { apiErrorFromGraphQL, sendApiError, type ApiError, type ErrorFormat } from './api-error.js';
import { buildOpenApiDocument, sofaOperation, type OpenApiExtras } from './openapi.js';
import { RouteTable, type CompiledRoute, type HandwrittenRoute } from './route-table.js';
import { renameForRest, type RestNamer } from './rest-names.js';
import { checkParameters } from './strict-parameters.js';
import { DEFAULT_JSON_MAX_DEPTH, nestsDeeperThan, tooDeepMessage } from '../../core/json-depth.js';

type SofaConfig = Parameters<typeof createSofa>[0];
/** What fets's Swagger UI takes as its document: its parameter types are narrower than OpenAPI's own. */
type SwaggerSpec = NonNullable<NonNullable<SofaConfig['swaggerUI']>['spec']>;

/** The context sofa hands to `execute`: the edge's, plus the body fields sent as explicit nulls. */
interface BridgeContext extends EdgeContext {
  explicitNulls: Set<string>;
}

export interface RestBridgeOptions {
  /** Where the paths are mounted, e.g. /api/v1. */
  basePath: string;
  /** The gateway's API schema. */
  schema: GraphQLSchema;
  /** The gateway's Apollo server; every REST call is one operation on it. */
  apollo: ApolloServer<EdgeContext>;
  /** The executor's short way: a route whose text Apollo accepted as one fetch is sent without Apollo's pipeline. */
  passthrough?: QueryPassthrough;
  routes: BridgeRoutes;
  /** `Type.field` paths whose objects are expanded instead of being cut to `{id}`. */
  expanded?: string[];
  /** `Type.field` paths left out of every REST representation (fields that would fan out). */
  hidden?: string[];
  title: string;
  description: string;
  /** The specification's error body. */
  errorFormat: ErrorFormat;
  /** Largest request body accepted. */
  bodyLimit?: string;
  /** The specification's key scheme, error body and hand-written paths, for its OpenAPI document. */
  openApi?: OpenApiExtras;
  /**
   * REST names that differ from the graph's (a specification's own field and parameter names);
   * `expanded` then names fields by their REST names.
   */
  restName?: RestNamer;
  /** Paths the interface serves before the bridge, by hand-written handlers: for 404 and 405 here. */
  handwritten?: readonly HandwrittenRoute[];
  /** Query parameters the interface reads itself on every route (the traceroute key's `api_key`). */
  interfaceQuery?: readonly string[];
  /** How deeply a body may nest arrays and objects (JSON_MAX_DEPTH); default 64. */
  jsonMaxDepth?: number;
}

/** Where a bridge mounted at `basePath` serves its OpenAPI document (no key needed). */
export function openApiPath(basePath: string): string {
  return `${basePath}/openapi.json`;
}

function rootFieldOf(document: DocumentNode): string {
  const operation = document.definitions.find((d): d is OperationDefinitionNode => d.kind === 'OperationDefinition');
  const field = operation?.selectionSet.selections[0];
  return field && field.kind === 'Field' ? field.name.value : '';
}

/**
 * What sofa's router reads of a request (method, URL, headers, the body as text), over Express's
 * request. A WHATWG Request (undici's, in Node) copied every header and the body into objects of
 * its own on every call, which cost more than the router itself.
 */
function bridgeRequest(req: Request, url: URL, raw: Buffer) {
  const hasBody = raw.length > 0 && req.method !== 'GET' && req.method !== 'HEAD';
  return {
    method: req.method,
    url: url.href,
    headers: {
      get: (name: string): string | null => {
        const value = req.headers[name.toLowerCase()];
        return value === undefined ? null : Array.isArray(value) ? value.join(', ') : value;
      },
      has: (name: string): boolean => req.headers[name.toLowerCase()] !== undefined,
    },
    body: hasBody ? raw : null,
    text: async () => (hasBody ? raw.toString('utf8') : ''),
    json: async () => JSON.parse(hasBody ? raw.toString('utf8') : ''),
  };
}

/** What sofa's router calls for a route: the request (with its path parameters) and our context. */
type SofaHandler = (request: ReturnType<typeof bridgeRequest> & { params: Record<string, string> }, context: unknown) => Promise<globalThis.Response>;

/** Marks sofa's error answers, which `send` turns into the specification's body. */
const API_ERROR = 'x-bridge-api-error';

/** Writes a WHATWG Response (what sofa answers) to Express's response, errors in `format`. */
async function send(response: globalThis.Response, req: Request, res: ExpressResponse, format: ErrorFormat): Promise<void> {
  if (response.headers.has(API_ERROR)) {
    sendApiError(res, format, (await response.json()) as ApiError, String(req.id));
    return;
  }
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
  const hidden = new Set(options.hidden ?? []);
  // Sofa makes a route for every root field it sees: show it only the fields this spec maps.
  // Pruning drops the types no remaining field reaches, so the OpenAPI document shows only this spec.
  const filtered = pruneSchema(
    filterSchema({
      schema: options.schema,
      rootFieldFilter: (operation, fieldName) => `${operation}.${fieldName}` in options.routes,
      objectFieldFilter: (typeName, fieldName) => !hidden.has(`${typeName}.${fieldName}`),
    }),
  );
  const view = options.restName ? renameForRest(filtered, options.restName) : undefined;
  const schema = view?.schema ?? filtered;
  const table = new RouteTable(options.basePath, options.routes, schema, options.handwritten);
  const fail = (req: Request, res: ExpressResponse, error: ApiError) =>
    sendApiError(res, options.errorFormat, error, String(req.id));
  const unknownEndpoint = (req: Request, res: ExpressResponse) =>
    fail(req, res, { status: 404, code: 'unknown_endpoint', message: `No endpoint ${req.method} ${req.path}` });

  // Sofa builds each route's document once. Its text (in the graph's names) is kept with it: a
  // DocumentNode handed to Apollo is printed on every call, and the same text lets Apollo's
  // document store skip parsing and validation, as it does for a GraphQL client's repeated query.
  const texts = new WeakMap<DocumentNode, string>();
  const queryText = (document: DocumentNode): string => {
    let text = texts.get(document);
    if (text === undefined) {
      text = print(view ? view.toGraphQL(document) : document);
      texts.set(document, text);
    }
    return text;
  };

  const execute = (async (args: {
    document: DocumentNode;
    variableValues?: Record<string, unknown> | null;
    contextValue: BridgeContext;
    operationName?: string | null;
  }) => {
    const { explicitNulls, ...contextValue } = args.contextValue;
    // Sofa drops null body fields; a REST client sending `"phone": null` means "clear it".
    const variables = { ...args.variableValues };
    for (const name of explicitNulls) if (variables[name] === undefined) variables[name] = null;
    const query = queryText(args.document);
    const operationName = args.operationName ?? undefined;
    // An answer with errors, or none, is left in the context for Apollo's pipeline to complete.
    const short = await options.passthrough?.sendAccepted(query, operationName, variables, contextValue);
    const single: ExecutionResult = short ?? (await executeOnApollo(options.apollo, query, operationName, variables, contextValue));
    const field = rootFieldOf(args.document);
    const route = table.byField(field);
    const result = view
      ? {
          ...single,
          data: single.data && view.dataToRest(args.document, single.data),
          errors: route ? single.errors?.map((e) => view.errorToRest(e, route.graphqlPath.split('.')[0], field)) : single.errors,
        }
      : single;
    // A lookup that finds nothing is a 404 in REST, not `200 null`.
    if (!result.errors?.length && result.data && result.data[field] === null && route?.resource) {
      const notFound: GraphQLFormattedError = {
        message: `No ${route.resource} with id "${String(variables.id)}"`,
        extensions: { code: 'NOT_FOUND', param: 'id', reason: `${route.resource.replace(/ /g, '_')}_not_found` },
      };
      return { data: null, errors: [notFound] };
    }
    return result;
  }) as unknown as SofaConfig['execute'];

  const sofa = createSofa({
    basePath: options.basePath,
    schema,
    routes: options.routes,
    ignore: options.expanded ?? [],
    depthLimit: 1,
    execute,
    context: ({ req, explicitNulls }: { req: Request; explicitNulls: Set<string> }): BridgeContext => ({
      principal: req.principal!,
      requestId: String(req.id),
      idempotency: req.idempotency,
      explicitNulls,
    }),
    errorHandler: (errors) => {
      // Sofa gives no request here; send() formats the error with the request's id.
      const error = apiErrorFromGraphQL(errors as GraphQLFormattedError[]);
      return new Response(JSON.stringify(error), {
        status: error.status,
        headers: { 'content-type': 'application/json; charset=utf-8', [API_ERROR]: '1' },
      });
    },
  } as SofaConfig & { context: unknown });

  // Sofa's own document leaves custom scalars undefined and describes types, not what is sent:
  // the one served (openapi.json below, and the /docs page) is built from the operations sofa
  // runs. Sofa reads custom scalar schemas only for its own document, so it is given none.
  const document = buildOpenApiDocument({
    title: options.title,
    description: options.description,
    basePath: options.basePath,
    schema,
    routes: options.routes,
    operations: new Map(Object.keys(options.routes).map((path) => [path, sofaOperation(schema, path, sofa)])),
    extras: options.openApi,
  });
  const router = createSofaRouter({ ...sofa, openAPI: { endpoint: false }, swaggerUI: { spec: document as unknown as SwaggerSpec } });
  // Sofa's handler for each route, by method and path as the routes name them. feTS lists a
  // router's routes as `__routes`; sofa adds its own webhook routes there too, which no route of
  // the table names.
  const handlers = new Map<string, SofaHandler>(
    (router as unknown as { __routes: { method: string; path: string; handler: SofaHandler }[] }).__routes.map((r) => [`${r.method.toUpperCase()} ${r.path}`, r.handler]),
  );
  for (const [graphqlPath, route] of Object.entries(options.routes)) {
    if (!handlers.has(`${route.method} ${route.path}`)) throw new Error(`Sofa made no handler for ${route.method} ${route.path} (${graphqlPath})`);
  }

  const documentation = new Set([openApiPath(options.basePath), `${options.basePath}/docs`]);
  // The body is read here, once, so that its JSON is checked and its explicit nulls are known.
  const readBody = express.raw({ type: () => true, limit: options.bodyLimit ?? '1mb' });
  const maxDepth = options.jsonMaxDepth ?? DEFAULT_JSON_MAX_DEPTH;

  // The query parameters each route takes beside its arguments, made once per route, not per request.
  const extraQueries = new Map<CompiledRoute, ReadonlySet<string>>();
  const extraQueryOf = (route: CompiledRoute): ReadonlySet<string> => {
    let names = extraQueries.get(route);
    if (!names) extraQueries.set(route, (names = new Set([...(options.interfaceQuery ?? []), ...(route.query ?? [])])));
    return names;
  };

  const handle = async (req: Request, res: ExpressResponse): Promise<void> => {
    const raw: Buffer = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    const url = new URL(req.originalUrl, `http://${req.headers.host ?? 'localhost'}`);
    // `/members/` is `/members`: the route table allows the slash, sofa's router does not.
    if (url.pathname.length > 1 && url.pathname.endsWith('/')) url.pathname = url.pathname.replace(/\/+$/, '');
    let explicitNulls = new Set<string>();
    let route: { handler: SofaHandler; params: Record<string, string> } | undefined;
    if (documentation.has(url.pathname)) {
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        res.setHeader('allow', 'GET');
        fail(req, res, { status: 405, code: 'method_not_allowed', message: `${req.method} is not allowed on ${url.pathname}; use GET` });
        return;
      }
      if (url.pathname === openApiPath(options.basePath)) return void res.json(document);
    } else {
      const match = table.match(req.method, url.pathname);
      if (match.kind === 'none') return void unknownEndpoint(req, res);
      if (match.kind === 'wrong-method') {
        res.setHeader('allow', match.allowed.join(', '));
        fail(req, res, { status: 405, code: 'method_not_allowed', message: `${req.method} is not allowed on ${req.path}; use ${match.allowed.join(' or ')}` });
        return;
      }
      let body: Record<string, unknown> | undefined;
      if (raw.length) {
        // A body is JSON, said so: a form or text body is not read as something else.
        if (!req.is('application/json') && !req.is('application/*+json')) {
          fail(req, res, { status: 415, code: 'unsupported_media_type', message: `The request body must be JSON, sent with Content-Type: application/json (got ${req.headers['content-type'] ?? 'none'})` });
          return;
        }
        let parsed: unknown;
        try {
          parsed = JSON.parse(raw.toString('utf8'));
        } catch {
          fail(req, res, { status: 400, code: 'invalid_json', message: 'The request body is not valid JSON' });
          return;
        }
        // Before anything walks it: the parameter check, GraphQL and the subgraph fetch all recurse.
        if (nestsDeeperThan(parsed, maxDepth)) {
          fail(req, res, { status: 400, code: 'invalid_body', message: tooDeepMessage(maxDepth) });
          return;
        }
        if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
          fail(req, res, { status: 400, code: 'invalid_body', message: 'The request body must be a JSON object' });
          return;
        }
        body = parsed as Record<string, unknown>;
        const nullable = table.nullableArgs(match.route);
        explicitNulls = new Set(Object.entries(parsed).filter(([k, v]) => v === null && nullable.has(k)).map(([k]) => k));
      }
      const problem = checkParameters(match.route, url.searchParams, body, { extraQuery: extraQueryOf(match.route) });
      if (problem) return void fail(req, res, problem);
      // Every route has a handler: checked when the bridge is built.
      route = { handler: handlers.get(`${match.route.method} ${match.route.path}`)!, params: table.params(match.route, url.pathname) };
    }
    const request = bridgeRequest(req, url, raw);
    // A matched route goes straight to sofa's handler for it: the route table has already found
    // it and its parameters, and the router would only find them again (a URLPattern tried per
    // route, about a tenth of a REST request's CPU). The documentation pages use the router.
    const response = route
      ? await route.handler(Object.assign(request, { params: route.params }), { req, res, explicitNulls })
      : ((await router.fetch(request as unknown as globalThis.Request, { req, res, explicitNulls })) as globalThis.Response | undefined);
    // Every request that gets here has a route; should sofa's router still answer nothing, say so.
    if (!response) return void unknownEndpoint(req, res);
    await send(response, req, res, options.errorFormat);
  };

  return (req: Request, res: ExpressResponse, next: NextFunction): void => {
    readBody(req, res, (error?: unknown) => {
      if (error) return next(error);
      handle(req, res).catch(next);
    });
  };
}

async function executeOnApollo(apollo: ApolloServer<EdgeContext>, query: string, operationName: string | undefined, variables: Record<string, unknown>, contextValue: EdgeContext): Promise<ExecutionResult> {
  const response = await apollo.executeOperation({ query, variables, operationName }, { contextValue });
  if (response.body.kind !== 'single') throw new Error('Incremental delivery is not used by the REST bridge');
  return response.body.singleResult as ExecutionResult;
}
