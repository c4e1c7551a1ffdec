import { DomainError } from './errors.js';
import type { MiddlewareFn } from './type-graphql.js';

function findNul(value: unknown, path: string): string | undefined {
  if (typeof value === 'string') return value.includes('\0') ? path : undefined;
  if (Array.isArray(value)) {
    for (const item of value) {
      const found = findNul(item, path);
      if (found) return found;
    }
    return undefined;
  }
  if (value && typeof value === 'object' && !(value instanceof Date)) {
    for (const [key, item] of Object.entries(value)) {
      const found = findNul(item, path ? `${path}.${key}` : key);
      if (found) return found;
    }
  }
  return undefined;
}

/**
 * PostgreSQL cannot store U+0000 in text and fails the statement; an argument carrying one is
 * refused as bad input, before any resolver can pass it on.
 */
export const rejectNulCharacters: MiddlewareFn = ({ args }, next) => {
  const param = findNul(args, '');
  if (param) throw new DomainError('BAD_USER_INPUT', `${param} must not contain the NUL character`, { param, reason: 'invalid_parameter' });
  return next();
};
