import { createReadStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createInterface } from 'node:readline';

/**
 * One record of an input file, or why that position could not be read. `text` is the record
 * exactly as the file has it (its line, or its element of an array); `envelope` the rest of a
 * `{results: [...]}` wrapper (a probe section, metadata), shared by the records it wraps.
 */
export type RawRecord =
  | { position: string; value: unknown; text: string; envelope?: Record<string, unknown> }
  | { position: string; error: string };

const isWrapper = (document: unknown): document is { results: unknown[] } & Record<string, unknown> =>
  !!document && typeof document === 'object' && !Array.isArray(document) && Array.isArray((document as { results?: unknown }).results);

/** The wrapper's other members, for the records it wraps; undefined when it has none. */
function envelopeOf(wrapper: Record<string, unknown>): Record<string, unknown> | undefined {
  const { results: _results, ...rest } = wrapper;
  return Object.keys(rest).length ? rest : undefined;
}

function* fromDocument(text: string, label: string): Generator<RawRecord> {
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch (error) {
    yield { position: label, error: `not JSON: ${(error as Error).message}` };
    return;
  }
  const list = Array.isArray(document) ? document : isWrapper(document) ? document.results : [document];
  const texts = Array.isArray(document) || isWrapper(document) ? elementTexts(text) : [text.trim()];
  const envelope = isWrapper(document) ? envelopeOf(document) : undefined;
  for (const [index, value] of list.entries()) yield { position: `record ${index + 1}`, value, text: texts[index], ...(envelope ? { envelope } : {}) };
}

function lineRecord(line: string, number: number): RawRecord | null {
  if (!line.trim()) return null;
  try {
    return { position: `line ${number}`, value: JSON.parse(line), text: line };
  } catch (error) {
    return { position: `line ${number}`, error: `not JSON: ${(error as Error).message}` };
  }
}

const WHITESPACE = new Set([' ', '\t', '\n', '\r']);
const skipSpace = (text: string, at: number) => {
  while (WHITESPACE.has(text[at])) at++;
  return at;
};

/** Where the JSON value starting at `at` of valid JSON `text` ends (exclusive). */
function valueEnd(text: string, at: number): number {
  const first = text[at];
  if (first === '"') {
    let i = at + 1;
    while (text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
    return i + 1;
  }
  if (first === '{' || first === '[') {
    let depth = 0;
    for (let i = at; i < text.length; i++) {
      const c = text[i];
      if (c === '"') i = valueEnd(text, i) - 1;
      else if (c === '{' || c === '[') depth++;
      else if ((c === '}' || c === ']') && --depth === 0) return i + 1;
    }
    return text.length;
  }
  let i = at;
  while (i < text.length && !WHITESPACE.has(text[i]) && text[i] !== ',' && text[i] !== '}' && text[i] !== ']') i++;
  return i;
}

/** The text of each element of the array starting at `at`. */
function arrayTexts(text: string, at: number): string[] {
  const texts: string[] = [];
  let i = skipSpace(text, at + 1);
  while (text[i] !== ']') {
    const end = valueEnd(text, i);
    texts.push(text.slice(i, end));
    i = skipSpace(text, end);
    if (text[i] === ',') i = skipSpace(text, i + 1);
  }
  return texts;
}

/**
 * The source text of each record of a valid JSON document that is an array or a `{results: [...]}`
 * wrapper (the last `results`, as JSON.parse keeps the last of repeated keys): what the file says,
 * byte for byte, rather than the record written out again.
 */
export function elementTexts(document: string): string[] {
  const start = skipSpace(document, 0);
  if (document[start] === '[') return arrayTexts(document, start);
  let results = -1;
  let i = skipSpace(document, start + 1);
  while (document[i] === '"') {
    const keyEnd = valueEnd(document, i);
    const key = JSON.parse(document.slice(i, keyEnd)) as string;
    const value = skipSpace(document, skipSpace(document, keyEnd) + 1);
    if (key === 'results') results = value;
    i = skipSpace(document, valueEnd(document, value));
    if (document[i] === ',') i = skipSpace(document, i + 1);
  }
  return results === -1 ? [] : arrayTexts(document, results);
}

/**
 * The records of an import, whatever its layout: a JSON array, the `{results: [...]}` wrapper
 * Atlas tools write, one JSON object per line (RIPE Atlas or scamper2), or one pretty-printed
 * object. Lines are read one at a time, so a JSON-lines file of any size streams.
 */
export async function* readRecords(lines: AsyncIterable<string>, whole: () => Promise<string>): AsyncGenerator<RawRecord> {
  let number = 0;
  let mode: 'lines' | undefined;
  for await (const line of lines) {
    number++;
    if (mode === 'lines') {
      const record = lineRecord(line, number);
      if (record) yield record;
      continue;
    }
    const head = line.trimStart();
    if (!head) continue;
    if (head.startsWith('{')) {
      let first: unknown;
      try {
        first = JSON.parse(line);
      } catch {
        // A pretty-printed document: its first line alone is not JSON.
        yield* fromDocument(await whole(), 'document');
        return;
      }
      mode = 'lines';
      if (isWrapper(first)) {
        const texts = elementTexts(line);
        const envelope = envelopeOf(first);
        for (const [index, value] of first.results.entries()) {
          yield { position: `line ${number} record ${index + 1}`, value, text: texts[index], ...(envelope ? { envelope } : {}) };
        }
      } else yield { position: `line ${number}`, value: first, text: line };
      continue;
    }
    if (head.startsWith('[')) {
      yield* fromDocument(await whole(), 'document');
      return;
    }
    yield { position: `line ${number}`, error: 'not JSON: expected an object or an array' };
    mode = 'lines';
  }
}

/** The records of a file on disk; `progress.bytes` follows how much of it was read. */
export function readFileRecords(path: string, progress?: { bytes: number }): AsyncGenerator<RawRecord> {
  const stream = createReadStream(path, { encoding: 'utf8' });
  if (progress) stream.on('data', () => (progress.bytes = stream.bytesRead));
  const lines = createInterface({ input: stream, crlfDelay: Infinity });
  return readRecords(lines, async () => {
    lines.close();
    stream.destroy();
    return readFile(path, 'utf8');
  });
}

/** The records of content given as one string (the GraphQL import). */
export function readTextRecords(text: string): AsyncGenerator<RawRecord> {
  async function* lines() {
    yield* text.split(/\r?\n/);
  }
  return readRecords(lines(), async () => text);
}
