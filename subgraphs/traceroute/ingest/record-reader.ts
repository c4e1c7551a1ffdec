import { createReadStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createInterface } from 'node:readline';

/** One record of an input file, or why that position could not be read. */
export type RawRecord = { position: string; value: unknown } | { position: string; error: string };

function* fromDocument(text: string, label: string): Generator<RawRecord> {
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch (error) {
    yield { position: label, error: `not JSON: ${(error as Error).message}` };
    return;
  }
  const list = Array.isArray(document)
    ? document
    : document && typeof document === 'object' && Array.isArray((document as { results?: unknown }).results)
      ? (document as { results: unknown[] }).results
      : [document];
  for (const [index, value] of list.entries()) yield { position: `record ${index + 1}`, value };
}

function lineRecord(line: string, number: number): RawRecord | null {
  if (!line.trim()) return null;
  try {
    return { position: `line ${number}`, value: JSON.parse(line) };
  } catch (error) {
    return { position: `line ${number}`, error: `not JSON: ${(error as Error).message}` };
  }
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
      if (first && typeof first === 'object' && Array.isArray((first as { results?: unknown }).results)) {
        for (const [index, value] of (first as { results: unknown[] }).results.entries()) {
          yield { position: `line ${number} record ${index + 1}`, value };
        }
      } else yield { position: `line ${number}`, value: first };
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
