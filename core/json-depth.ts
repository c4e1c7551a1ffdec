/**
 * How deeply a request's JSON may nest arrays and objects (JSON_MAX_DEPTH). Honest bodies stay far
 * below it: a member's customFields is 2 levels, a chat body with a tool's JSON-schema parameters
 * about 20. Past it a value is refused before anything walks it: serialising, validating or
 * storing it recursively would exhaust the stack a few thousand levels down.
 */
export const DEFAULT_JSON_MAX_DEPTH = 64;

/** Whether `value` nests arrays and objects deeper than `limit`; iterative, so any depth is safe to ask about. */
export function nestsDeeperThan(value: unknown, limit: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [current, depth] = stack.pop()!;
    if (current === null || typeof current !== 'object') continue;
    if (depth + 1 > limit) return true;
    for (const child of Array.isArray(current) ? current : Object.values(current)) {
      if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
    }
  }
  return false;
}

/** The refusal's words, the same on every interface. */
export function tooDeepMessage(limit: number): string {
  return `The request nests JSON arrays and objects deeper than ${limit} levels`;
}
