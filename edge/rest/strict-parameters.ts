import {
  getNamedType,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isScalarType,
  type GraphQLInputType,
  type GraphQLScalarType,
} from 'graphql';
import type { ApiError } from './api-error.js';
import type { CompiledRoute } from './route-table.js';

/**
 * REST parameters checked as Stripe checks them, before GraphQL sees the request: a parameter the
 * route does not take is 400 `unknown_parameter`, never dropped; a value of the wrong JSON type is
 * 400 `invalid_parameter`, never coerced (GraphQL would store `"name": 123` as "123"); a missing
 * required one is 400 `missing_parameter`. Every refusal names the parameter (`lines.0.unitAmount`
 * inside objects and lists) in the interface's words, not GraphQL's.
 */

// The range in the words, so that a too-large whole number is not told it is no integer.
const INT = 'an integer from -2147483647 to 2147483647';
const SAFE_INT = 'an integer from -9007199254740991 to 9007199254740991';
/** What a JSON value must be for each scalar the REST routes take; custom scalars by their wire form. */
const JSON_SCALARS: Record<string, { test: (value: unknown) => boolean; expected: string }> = {
  String: { test: (v) => typeof v === 'string', expected: 'a string' },
  ID: { test: (v) => typeof v === 'string', expected: 'a string' },
  Int: { test: (v) => Number.isInteger(v) && Math.abs(v as number) <= 2 ** 31 - 1, expected: INT },
  SafeInt: { test: (v) => Number.isSafeInteger(v), expected: SAFE_INT },
  Float: { test: (v) => typeof v === 'number' && Number.isFinite(v), expected: 'a number' },
  Boolean: { test: (v) => typeof v === 'boolean', expected: 'true or false' },
  DateTime: { test: (v) => typeof v === 'string', expected: 'a date-time string (ISO 8601)' },
  LocalDate: { test: (v) => typeof v === 'string', expected: 'a date string (YYYY-MM-DD)' },
  JSONObject: { test: (v) => v !== null && typeof v === 'object' && !Array.isArray(v), expected: 'a JSON object' },
};

const describe = (value: unknown): string =>
  value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value === 'object' ? 'an object' : `${typeof value} ${JSON.stringify(value)}`;

function unknown(param: string, where: string): ApiError {
  return { status: 400, code: 'unknown_parameter', param, message: `Received unknown parameter: ${param} (${where})` };
}

function invalid(param: string, message: string): ApiError {
  return { status: 400, code: 'invalid_parameter', param, message };
}

/** The first problem of `value` as a value of `type` at `param`, if any. */
function checkValue(value: unknown, type: GraphQLInputType, param: string): ApiError | undefined {
  if (value === null) return isNonNullType(type) ? invalid(param, `${param} cannot be null`) : undefined;
  const inner = isNonNullType(type) ? type.ofType : type;
  if (isListType(inner)) {
    if (!Array.isArray(value)) return invalid(param, `${param} must be an array, got ${describe(value)}`);
    for (const [index, element] of value.entries()) {
      const problem = checkValue(element, inner.ofType, `${param}.${index}`);
      if (problem) return problem;
    }
    return undefined;
  }
  if (isInputObjectType(inner)) {
    if (typeof value !== 'object' || Array.isArray(value)) return invalid(param, `${param} must be an object, got ${describe(value)}`);
    const fields = inner.getFields();
    for (const [name, field] of Object.entries(value as Record<string, unknown>)) {
      if (!(name in fields)) return unknown(`${param}.${name}`, `${param} takes ${Object.keys(fields).join(', ')}`);
      const problem = checkValue(field, fields[name].type, `${param}.${name}`);
      if (problem) return problem;
    }
    for (const [name, field] of Object.entries(fields)) {
      if (isNonNullType(field.type) && field.defaultValue === undefined && (value as Record<string, unknown>)[name] === undefined) {
        return { status: 400, code: 'missing_parameter', param: `${param}.${name}`, message: `Missing required parameter: ${param}.${name}` };
      }
    }
    return undefined;
  }
  if (isEnumType(inner)) {
    const values = inner.getValues().map((v) => v.name);
    return typeof value === 'string' && values.includes(value) ? undefined : invalid(param, `${param} must be one of ${values.join(', ')}, got ${describe(value)}`);
  }
  if (isScalarType(inner)) {
    const check = JSON_SCALARS[inner.name];
    if (check && !check.test(value)) return invalid(param, `${param} must be ${check.expected}, got ${describe(value)}`);
    // The scalar's own rule (a real calendar date, a safe integer), in our words rather than its.
    if (!parses(inner, value)) return invalid(param, `${param} must be ${check?.expected ?? 'a valid value'}, got ${describe(value)}`);
  }
  return undefined;
}

function parses(scalar: GraphQLScalarType, value: unknown): boolean {
  try {
    return scalar.parseValue(value) !== undefined;
  } catch {
    return false;
  }
}

/** What a query-string value must look like for each scalar (query values are text). */
const QUERY_SCALARS: Record<string, { test: (value: string) => boolean; expected: string }> = {
  Int: { test: (v) => /^-?\d{1,10}$/.test(v) && Math.abs(Number(v)) <= 2 ** 31 - 1, expected: INT },
  SafeInt: { test: (v) => /^-?\d{1,16}$/.test(v) && Number.isSafeInteger(Number(v)), expected: SAFE_INT },
  Float: { test: (v) => v.trim() !== '' && Number.isFinite(Number(v)), expected: 'a number' },
  Boolean: { test: (v) => v === 'true' || v === 'false', expected: 'true or false' },
};

export interface StrictParameterOptions {
  /** Query parameters an interface reads itself, beside the route's arguments (the traceroute key's `api_key`). */
  extraQuery?: ReadonlySet<string>;
}

/**
 * The first problem with a request's parameters for `route`: its query string, and the JSON
 * object of its body (undefined when it has none). Path parameters are the route's own and may
 * not be repeated in the query or the body.
 */
export function checkParameters(
  route: CompiledRoute,
  query: URLSearchParams,
  body: Record<string, unknown> | undefined,
  options: StrictParameterOptions = {},
): ApiError | undefined {
  const args = new Map(route.args.map((arg) => [arg.name, arg]));
  const fromPath = new Set(route.paramNames);
  const where = `${route.method} ${route.path}`;
  const taken = [...args.keys()].filter((name) => !fromPath.has(name));
  const takes = taken.length ? `${where} takes ${taken.join(', ')}` : `${where} takes no parameters`;

  for (const name of new Set(query.keys())) {
    if (options.extraQuery?.has(name)) continue;
    const arg = args.get(name);
    if (!arg || fromPath.has(name)) return unknown(name, takes);
    const values = query.getAll(name);
    const named = getNamedType(arg.type);
    const list = isListType(isNonNullType(arg.type) ? arg.type.ofType : arg.type);
    if (values.length > 1 && !list) return invalid(name, `${name} was given ${values.length} times; it takes one value`);
    if (isInputObjectType(named)) return invalid(name, `${name} is an object: send it in a JSON body`);
    for (const value of values) {
      const check = QUERY_SCALARS[named.name];
      if (check && !check.test(value)) return invalid(name, `${name} must be ${check.expected}, got "${value}"`);
      if (isEnumType(named) && !named.getValue(value)) return invalid(name, `${name} must be one of ${named.getValues().map((v) => v.name).join(', ')}, got "${value}"`);
      // Text scalars (dates, ids) by their own rule; numbers and booleans were read above.
      if (isScalarType(named) && !check && named.name !== 'String' && named.name !== 'ID' && !parses(named, value)) {
        return invalid(name, `${name} must be ${JSON_SCALARS[named.name]?.expected ?? 'a valid value'}, got "${value}"`);
      }
    }
  }

  if (body) {
    for (const [name, value] of Object.entries(body)) {
      const arg = args.get(name);
      if (!arg || fromPath.has(name)) return unknown(name, takes);
      if (query.has(name)) return invalid(name, `${name} was given both in the query string and in the body`);
      const problem = checkValue(value, arg.type, name);
      if (problem) return problem;
    }
  }

  for (const [name, arg] of args) {
    if (fromPath.has(name) || !isNonNullType(arg.type) || arg.defaultValue !== undefined) continue;
    if (query.has(name) || (body && body[name] !== undefined)) continue;
    return { status: 400, code: 'missing_parameter', param: name, message: `Missing required parameter: ${name}` };
  }
  return undefined;
}
