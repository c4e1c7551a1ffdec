import { readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { SUBGRAPH_NAMES } from '../../platform/config.js';

// The README is what users and operators read; these checks keep it from drifting from the code:
// every setting the platform reads and every error code it can answer is documented there.
const root = path.resolve(import.meta.dirname, '..', '..');
const readme = readFileSync(path.join(root, 'README.md'), 'utf8');
/** The README and the references it links to (docs/*.md): where a setting or an error code may be documented. */
const documented = [readme, ...readdirSync(path.join(root, 'docs')).filter((name) => name.endsWith('.md')).map((name) => readFileSync(path.join(root, 'docs', name), 'utf8'))].join('\n');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return name === 'migrations' ? [] : sourceFiles(full);
    return full.endsWith('.ts') ? [full] : [];
  });
}

const sources = ['platform', 'edge', 'subgraphs', 'cli']
  .flatMap((dir) => sourceFiles(path.join(root, dir)))
  .map((file) => ({ file: path.relative(root, file), text: readFileSync(file, 'utf8') }));

/**
 * Environment variables read by the services: `env.NAME`, `env['NAME']`, the config helpers'
 * `(env, 'NAME'`, and names built per subgraph at run time (`${name.toUpperCase()}_URL`), one for
 * each of SUBGRAPH_NAMES.
 */
function settingsRead(): Map<string, string> {
  const found = new Map<string, string>();
  const patterns = [/\benv\.([A-Z][A-Z0-9_]+)\b/g, /\benv\[['`]([A-Z][A-Z0-9_]+)['`]\]/g, /\(env, '([A-Z][A-Z0-9_]+)'/g];
  const perSubgraph = /`\$\{\w+\.toUpperCase\(\)\}_([A-Z][A-Z0-9_]*)`/g;
  for (const { file, text } of sources) {
    for (const pattern of patterns) for (const match of text.matchAll(pattern)) found.set(match[1], file);
    for (const match of text.matchAll(perSubgraph)) for (const name of SUBGRAPH_NAMES) found.set(`${name.toUpperCase()}_${match[1]}`, file);
  }
  // Set by the runtime or the test runner, not by an operator.
  for (const name of ['NODE_ENV', 'VITEST', 'CI']) found.delete(name);
  return found;
}

/** The REST error codes the code can answer with: `reason: 'x'` in domain errors and `code: 'x'` at the edge. */
function errorCodesRaised(): Map<string, string> {
  const found = new Map<string, string>();
  // Domain errors and the edge (`reason: 'x'`, `code: 'x'`), and the OpenAI-compatible interfaces' `new WireError(status, 'x'`.
  const patterns = [/\b(?:reason|code): '([a-z][a-z0-9_]+)'/g, /new WireError\(\s*[\w.()]+,\s*'([a-z][a-z0-9_]+)'/g];
  // An engine's refusal reasons are not answers of an API: each interface maps them to its own
  // status and code (subgraphs/inference/engine/text-engine.ts).
  for (const { file, text } of sources.filter(({ file }) => !file.startsWith('subgraphs/inference/engines/'))) {
    for (const pattern of patterns) for (const match of text.matchAll(pattern)) found.set(match[1], file);
  }
  return found;
}

describe('README.md', () => {
  it('documents every environment variable the platform reads', () => {
    const settings = settingsRead();
    expect(settings.size).toBeGreaterThan(10);
    // Those the scan finds only by expanding a name built at run time, and those read by helpers.
    for (const name of SUBGRAPH_NAMES) expect([...settings.keys()]).toEqual(expect.arrayContaining([`${name.toUpperCase()}_URL`, `${name.toUpperCase()}_PORT`]));
    const missing = [...settings].filter(([name]) => !documented.includes(`\`${name}\``)).map(([name, file]) => `${name} (${file})`);
    expect(missing).toEqual([]);
  });

  it('documents every error code an API can answer with', () => {
    const codes = errorCodesRaised();
    expect(codes.size).toBeGreaterThan(20);
    const missing = [...codes].filter(([code]) => !documented.includes(`\`${code}\``)).map(([code, file]) => `${code} (${file})`);
    expect(missing).toEqual([]);
  });

  it('makes no promise of work "to come" for what exists', () => {
    expect(readme).not.toMatch(/\((?:[^)]*\s)?(?:so far|later)\)|until then|comes? with the [a-z ]+ issue/i);
  });
});
