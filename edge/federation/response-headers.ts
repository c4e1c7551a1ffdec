export type RawHeaders = Record<string, string | string[] | undefined>;

/**
 * Response headers as the Fetcher interface reads them, over undici's own record (names lower
 * case). Building a WHATWG Headers per subgraph fetch, with its validation of every name and
 * value, was 5% of a member lookup's profile at one connection; what reads these headers is the
 * content-type check in parseBody and, when shared, the copy deduplication keeps.
 */
export class ResponseHeaders implements Iterable<[string, string]> {
  constructor(readonly raw: RawHeaders) {}

  get(name: string): string | null {
    const value = this.raw[name.toLowerCase()];
    return value === undefined ? null : Array.isArray(value) ? value.join(', ') : value;
  }

  has(name: string): boolean {
    return this.raw[name.toLowerCase()] !== undefined;
  }

  *entries(): IterableIterator<[string, string]> {
    for (const [name, value] of Object.entries(this.raw)) {
      if (value === undefined) continue;
      if (Array.isArray(value)) for (const one of value) yield [name, one];
      else yield [name, value];
    }
  }

  *keys(): IterableIterator<string> {
    for (const [name] of this.entries()) yield name;
  }

  *values(): IterableIterator<string> {
    for (const [, value] of this.entries()) yield value;
  }

  [Symbol.iterator](): IterableIterator<[string, string]> {
    return this.entries();
  }

  // A response's headers are read, never changed.
  append(): void {
    throw new TypeError('Response headers are read-only');
  }

  set(): void {
    throw new TypeError('Response headers are read-only');
  }

  delete(): void {
    throw new TypeError('Response headers are read-only');
  }
}
