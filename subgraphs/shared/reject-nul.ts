import { DomainError } from '../../core/errors.js';
import { defaultFieldResolver, isObjectType, type GraphQLSchema } from 'graphql';

// In a u-mode pattern a surrogate pair is one code point, so only a lone surrogate matches.
const LONE_SURROGATE = /\p{Cs}/u;

/** What PostgreSQL cannot store in text or jsonb: U+0000, and UTF-16 surrogates without their pair. */
function problemOf(text: string): 'nul' | 'surrogate' | undefined {
  if (text.includes('\0')) return 'nul';
  if (LONE_SURROGATE.test(text)) return 'surrogate';
  return undefined;
}

function findUnstorable(value: unknown, path: string): { param: string; problem: 'nul' | 'surrogate' } | undefined {
  if (typeof value === 'string') {
    const problem = problemOf(value);
    return problem ? { param: path, problem } : undefined;
  }
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) {
      const found = findUnstorable(item, `${path}.${index}`);
      if (found) return found;
    }
    return undefined;
  }
  if (value && typeof value === 'object' && !(value instanceof Date)) {
    for (const [key, item] of Object.entries(value)) {
      // Keys too: a JSON argument (customFields) is stored with them.
      const keyProblem = problemOf(key);
      if (keyProblem) return { param: path || key, problem: keyProblem };
      const found = findUnstorable(item, path ? `${path}.${key}` : key);
      if (found) return found;
    }
  }
  return undefined;
}

/**
 * PostgreSQL cannot store U+0000 in text and fails the statement, and jsonb refuses a lone
 * surrogate (an audit snapshot or customFields would carry it); an argument carrying either, in a
 * value or a key, is refused as bad input before any resolver can pass it on.
 */
function assertStorable(args: Record<string, unknown>): void {
  const found = findUnstorable(args, '');
  if (found) {
    const { param, problem } = found;
    const message = problem === 'nul' ? `${param} must not contain the NUL character` : `${param} must be well-formed Unicode (a lone surrogate is not)`;
    throw new DomainError('BAD_USER_INPUT', message, { param, reason: 'invalid_parameter' });
  }
}

/**
 * Puts the check in front of every field that takes arguments, and of no other. As a type-graphql
 * global middleware it wrapped every field, and a page of 20 members paid for 700 async
 * middleware chains (a promise each) on plain properties that take no argument at all.
 */
export function rejectNulInArguments(schema: GraphQLSchema): GraphQLSchema {
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || type.name.startsWith('__')) continue;
    for (const field of Object.values(type.getFields())) {
      if (field.args.length === 0) continue;
      const resolve = field.resolve ?? defaultFieldResolver;
      field.resolve = (source, args, context, info) => {
        assertStorable(args);
        return resolve(source, args, context, info);
      };
      const subscribe = field.subscribe;
      if (subscribe) {
        field.subscribe = (source, args, context, info) => {
          assertStorable(args);
          return subscribe(source, args, context, info);
        };
      }
    }
  }
  return schema;
}
