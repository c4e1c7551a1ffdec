import type { z } from 'zod';
import { tooDeepMessage } from '../../../core/json-depth.js';
import { validationError, WireError } from './wire-error.js';
import type { WireInterface } from './wire-interface.js';

/**
 * The refusal of a body nested past JSON_MAX_DEPTH. Past it, zod's error, which carries the input,
 * could not be serialised without exhausting the stack, so the body is refused before it is
 * validated: by the routes as they parse it, by the GraphQL inputs before they are checked.
 */
export const tooDeep = (limit: number) => new WireError(400, 'invalid_body', tooDeepMessage(limit));

/** Validates a wire body with `schema` (its depth checked already, as it was parsed); a refusal is the interface's own 400 or 422. */
export function parseWire<T>(iface: WireInterface, schema: z.ZodType<T>, body: unknown): T {
  // reportInput: zod 4 leaves each issue's input out unless asked, and validationError tells a
  // missing parameter (400) from a value of the wrong type (422 or 400) by it.
  const parsed = schema.safeParse(body, { reportInput: true });
  if (!parsed.success) throw validationError(iface, parsed.error);
  return parsed.data;
}
