import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The committed supergraph the gateway runs on: loaded from disk, never introspected. */
export function readSupergraph(): string {
  return readFileSync(path.join(path.dirname(fileURLToPath(import.meta.url)), 'supergraph.graphql'), 'utf8');
}
