import { getNamedType, isNonNullType, type GraphQLArgument, type GraphQLSchema } from 'graphql';
import type { BridgeRoute, BridgeRoutes } from './bridge-routes.js';

export interface CompiledRoute extends BridgeRoute {
  /** `Query.members` */
  graphqlPath: string;
  field: string;
  args: readonly GraphQLArgument[];
  pattern: RegExp;
  /** The names of the path's `:params`, in the order `pattern` captures them. */
  paramNames: string[];
  /** A path the interface serves by a hand-written handler before the bridge: known here for 404 and 405 only. */
  handwritten?: boolean;
}

/** A path an interface serves by its own handler, not through a GraphQL field. */
export interface HandwrittenRoute {
  method: BridgeRoute['method'];
  path: string;
}

export type RouteMatch =
  | { kind: 'route'; route: CompiledRoute }
  | { kind: 'wrong-method'; allowed: string[] }
  | { kind: 'none' };

export interface ParameterProblem {
  param: string;
  message: string;
}

/** The order `Allow` lists methods in; HEAD wherever GET is. */
const ALLOW_ORDER = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

const SCALAR_CHECKS: Record<string, { test: (value: string) => boolean; expected: string }> = {
  Int: { test: (v) => /^-?\d{1,10}$/.test(v) && Math.abs(Number(v)) <= 2 ** 31 - 1, expected: 'an integer' },
  Float: { test: (v) => v.trim() !== '' && Number.isFinite(Number(v)), expected: 'a number' },
  Boolean: { test: (v) => v === 'true' || v === 'false', expected: 'true or false' },
};

/**
 * The spec's routes with the graph's arguments behind them: which route a request is for, and
 * whether its query parameters can be read as their arguments' types. Sofa checks types too,
 * but its error does not say which parameter was wrong.
 */
export class RouteTable {
  private readonly routes: CompiledRoute[];
  /**
   * The routes a path can match, by its first segment after the base: those with that literal
   * segment and those whose first segment is a parameter, in table order. A request tries these
   * few patterns, not every route's (about fifty on the membership base).
   */
  private readonly bySegment = new Map<string, CompiledRoute[]>();
  /** The routes whose first segment is a parameter: all a path with any other first segment can match. */
  private readonly anySegment: CompiledRoute[];

  constructor(
    private readonly basePath: string,
    routes: BridgeRoutes,
    schema: GraphQLSchema,
    handwritten: readonly HandwrittenRoute[] = [],
  ) {
    const compile = (route: BridgeRoute) => {
      const source = (basePath + route.path).replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/\\?:(\w+)/g, '([^/]+)');
      const paramNames = [...route.path.matchAll(/:(\w+)/g)].map((found) => found[1]);
      return { pattern: new RegExp(`^${source}/?$`), paramNames };
    };
    this.routes = Object.entries(routes).map(([graphqlPath, route]) => {
      const [typeName, field] = graphqlPath.split('.');
      const type = typeName === 'Query' ? schema.getQueryType() : schema.getMutationType();
      const definition = type?.getFields()[field];
      if (!definition) throw new Error(`The REST route ${route.method} ${route.path} names ${graphqlPath}, which the graph lacks`);
      return { ...route, graphqlPath, field, args: definition.args, ...compile(route) };
    });
    for (const route of handwritten) this.routes.push({ ...route, graphqlPath: '', field: '', args: [], handwritten: true, ...compile(route) });
    const firstOf = (route: CompiledRoute) => route.path.split('/')[1] ?? '';
    this.anySegment = this.routes.filter((route) => firstOf(route).startsWith(':'));
    for (const first of new Set(this.routes.map(firstOf).filter((first) => !first.startsWith(':')))) {
      this.bySegment.set(first, this.routes.filter((route) => firstOf(route) === first || firstOf(route).startsWith(':')));
    }
  }

  /** The routes whose pattern can match `path`, judged by its first segment after the base. */
  private candidates(path: string): CompiledRoute[] {
    if (!path.startsWith(this.basePath)) return this.routes;
    const first = path.slice(this.basePath.length).split('/')[1] ?? '';
    return this.bySegment.get(first) ?? this.anySegment;
  }

  match(method: string, path: string): RouteMatch {
    // A literal segment wins over a parameter, as in feTS: `/jobs/match` is not job "match", and
    // `/documents/upload` is the upload's path whatever the method; among equals, the table's order.
    const matching = this.candidates(path).filter((route) => route.pattern.test(path));
    if (!matching.length) return { kind: 'none' };
    const fewest = Math.min(...matching.map((route) => route.paramNames.length));
    const onPath = matching.filter((route) => route.paramNames.length === fewest);
    // HEAD is GET without the body (Node sends none for it).
    const wanted = method.toUpperCase() === 'HEAD' ? 'GET' : method.toUpperCase();
    const route = onPath.find((r) => r.method === wanted);
    if (route) return route.handwritten ? { kind: 'none' } : { kind: 'route', route };
    const methods = new Set(onPath.map((r) => r.method));
    return { kind: 'wrong-method', allowed: ALLOW_ORDER.filter((m) => methods.has(m === 'HEAD' ? 'GET' : m)) };
  }

  /** The path's parameters by name, decoded (a malformed escape is kept as sent). */
  params(route: CompiledRoute, path: string): Record<string, string> {
    const found = route.pattern.exec(path);
    const params: Record<string, string> = {};
    route.paramNames.forEach((name, index) => {
      const raw = found?.[index + 1] ?? '';
      try {
        params[name] = decodeURIComponent(raw);
      } catch {
        params[name] = raw;
      }
    });
    return params;
  }

  byField(field: string): CompiledRoute | undefined {
    return this.routes.find((route) => route.field === field);
  }

  /** The first query parameter that cannot be its argument's scalar type, if any. */
  checkQuery(route: CompiledRoute, query: URLSearchParams): ParameterProblem | undefined {
    for (const arg of route.args) {
      const value = query.get(arg.name);
      if (value === null) continue;
      const check = SCALAR_CHECKS[getNamedType(arg.type).name];
      if (check && !check.test(value)) {
        return { param: arg.name, message: `${arg.name} must be ${check.expected}, got "${value}"` };
      }
    }
    return undefined;
  }

  /** Names of the route's arguments that a body may set to null explicitly. */
  nullableArgs(route: CompiledRoute): Set<string> {
    return new Set(route.args.filter((arg) => !isNonNullType(arg.type)).map((arg) => arg.name));
  }
}
