// Patterns come from the configuration only, so the cache is as small as the file.
const cache = new Map<string, RegExp>();

/** Whether a model id matches a pattern of the configuration: `*` is any run of characters (slashes too), `?` one. */
export function matchesModelPattern(pattern: string, modelId: string): boolean {
  let regex = cache.get(pattern);
  if (!regex) {
    const source = [...pattern].map((c) => (c === '*' ? '.*' : c === '?' ? '.' : c.replace(/[\\^$.|+()[\]{}]/g, '\\$&'))).join('');
    regex = new RegExp(`^${source}$`, 's');
    cache.set(pattern, regex);
  }
  return regex.test(modelId);
}

/** Whether any of `patterns` matches the model id. */
export function matchesAnyModelPattern(patterns: readonly string[], modelId: string): boolean {
  return patterns.some((p) => matchesModelPattern(p, modelId));
}
