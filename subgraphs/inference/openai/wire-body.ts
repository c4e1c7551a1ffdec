import type { z } from 'zod';
import { validationError, WireError } from './openai-error.js';
import type { WireInterface } from './wire-interface.js';

/**
 * How deep a request body may nest. The deepest honest bodies (a tool's JSON-schema parameters, a
 * guided_json schema) stay far below it; past it, zod's error, which carries the input, cannot be
 * serialised without exhausting the stack, so the body is refused before it is validated.
 */
export const MAX_BODY_NESTING = 100;

/** Whether `value` nests arrays and objects deeper than `limit`; iterative, so any depth is safe to ask about. */
export function nestsDeeperThan(value: unknown, limit: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [current, depth] = stack.pop()!;
    if (current === null || typeof current !== 'object') continue;
    if (depth + 1 > limit) return true;
    for (const child of Array.isArray(current) ? current : Object.values(current)) stack.push([child, depth + 1]);
  }
  return false;
}

/** The refusal of a body nested past MAX_BODY_NESTING. */
export const tooDeep = () => new WireError(400, 'invalid_body', `The request body nests deeper than ${MAX_BODY_NESTING} levels`);

/** Validates a wire body with `schema`; a refusal is the interface's own 400 or 422. */
export function parseWire<T>(iface: WireInterface, schema: z.ZodType<T>, body: unknown): T {
  if (nestsDeeperThan(body, MAX_BODY_NESTING)) throw tooDeep();
  // reportInput: zod 4 leaves each issue's input out unless asked, and validationError tells a
  // missing parameter (400) from a value of the wrong type (422 or 400) by it.
  const parsed = schema.safeParse(body, { reportInput: true });
  if (!parsed.success) throw validationError(iface, parsed.error);
  return parsed.data;
}
