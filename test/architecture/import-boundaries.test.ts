import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// The folders of the platform import each other in one direction only (ARCHITECTURE.md, "Layers"):
// core <- subgraphs/shared <- each subgraph; core <- identity (the edge's key store, which no
// subgraph imports); edge <- platform (the composition root, with schema, cli and the
// dashboard's build beside it). Inside the edge, the shared parts sit below the interfaces. Read from the sources,
// so a new import that closes a cycle fails here, not in a review.

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const SOURCES = ['core', 'identity', 'edge', 'platform', 'subgraphs', 'schema', 'cli', 'dashboard'];
const IMPORT = /(?:import|export)\s[^;]*?from\s+'(\.{1,2}\/[^']+)'|import\(\s*'(\.{1,2}\/[^']+)'\s*\)/g;

/** A file's area: its top folder, or subgraphs/<name> for a subgraph. */
function areaOf(file: string): string {
  const [top, second] = file.split('/');
  return top === 'subgraphs' ? `subgraphs/${second}` : top!;
}

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  let entries;
  try {
    entries = readdirSync(join(ROOT, dir), { withFileTypes: true });
  } catch {
    return out;
  }
  for (const entry of entries) {
    if (entry.name === 'node_modules' || entry.name === 'dist') continue;
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) out.push(...sourceFiles(path));
    // .mjs: the launcher's build and the lock it shares with compiled code are plain JavaScript.
    else if (/\.(ts|tsx|mjs)$/.test(entry.name) && !/\.d\.m?ts$/.test(entry.name)) out.push(path);
  }
  return out;
}

/** Every import between the nodes `nodeOf` groups files into: from -> to -> the imports that make the edge. */
function importGraph(sources: string[], nodeOf: (file: string) => string): Map<string, Map<string, string[]>> {
  const edges = new Map<string, Map<string, string[]>>();
  for (const file of sources.flatMap(sourceFiles)) {
    const text = readFileSync(join(ROOT, file), 'utf8');
    for (const match of text.matchAll(IMPORT)) {
      const target = relative(ROOT, normalize(join(ROOT, dirname(file), match[1] ?? match[2]!)));
      const from = nodeOf(file);
      const to = nodeOf(target);
      if (from === to || target.startsWith('..') || target.startsWith('node_modules')) continue;
      const byTarget = edges.get(from) ?? new Map<string, string[]>();
      byTarget.set(to, [...(byTarget.get(to) ?? []), `${file} -> ${target}`]);
      edges.set(from, byTarget);
    }
  }
  return edges;
}

/** Each pair of a cycle, with the first import that makes it. */
function explain(graph: Map<string, Map<string, string[]>>): string[][] {
  return cycles(graph).map((group) =>
    group.flatMap((from) => [...(graph.get(from) ?? [])].filter(([to]) => group.includes(to)).map(([to, why]) => `${from} -> ${to}: ${why[0]}`)),
  );
}

/** The areas that can reach themselves again (Tarjan's strongly connected components of size > 1). */
function cycles(edges: Map<string, Map<string, string[]>>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const found: string[][] = [];
  let next = 0;
  const visit = (node: string) => {
    index.set(node, next);
    low.set(node, next++);
    stack.push(node);
    for (const to of edges.get(node)?.keys() ?? []) {
      if (!index.has(to)) {
        visit(to);
        low.set(node, Math.min(low.get(node)!, low.get(to)!));
      } else if (stack.includes(to)) low.set(node, Math.min(low.get(node)!, index.get(to)!));
    }
    if (low.get(node) === index.get(node)) {
      const group: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        group.push(member);
      } while (member !== node);
      if (group.length > 1) found.push(group.sort());
    }
  };
  for (const node of edges.keys()) if (!index.has(node)) visit(node);
  return found;
}

const edges = importGraph(SOURCES, areaOf);
const importsOf = (area: string) => [...(edges.get(area)?.keys() ?? [])].sort();

describe('import boundaries', () => {
  it('has no cycle between areas', () => {
    expect(explain(edges)).toEqual([]);
  });

  it("keeps the membership aggregates a tree: its folders (member, category, finance/invoice, ...) import each other one way only", () => {
    // Finance reads members; a member's paid periods reach finance through member-billing.ts's port.
    const membership = importGraph(['subgraphs/membership'], (file) => (file.startsWith('subgraphs/membership/') ? dirname(file) : areaOf(file)));
    expect(explain(membership)).toEqual([]);
  });

  it('keeps core neutral: it imports no other area', () => {
    expect(importsOf('core')).toEqual([]);
  });

  it('keeps the key store below everything that uses it: identity imports core only', () => {
    expect(importsOf('identity').filter((to) => to !== 'core')).toEqual([]);
  });

  it('keeps subgraphs apart: a subgraph imports core and subgraphs/shared only', () => {
    for (const area of edges.keys()) {
      if (!area.startsWith('subgraphs/') || area === 'subgraphs/shared') continue;
      expect(importsOf(area).filter((to) => !['core', 'subgraphs/shared'].includes(to)), area).toEqual([]);
    }
    expect(importsOf('subgraphs/shared').filter((to) => to !== 'core')).toEqual([]);
  });

  it("gives the keys one owner: no subgraph imports identity, they reach the edge's key store through core's KeyStore", () => {
    const intoIdentity = [...edges].filter(([from]) => from.startsWith('subgraphs/')).flatMap(([, byTarget]) => byTarget.get('identity') ?? []);
    expect(intoIdentity).toEqual([]);
  });

  it('keeps the edge off the subgraphs: nothing at the edge imports subgraph code', () => {
    const intoSubgraphs = [...(edges.get('edge') ?? [])].filter(([to]) => to.startsWith('subgraphs/')).flatMap(([, why]) => why);
    expect(intoSubgraphs).toEqual([]);
  });

  // The edge's own layers: the parts every interface shares (access, rest, federation,
  // idempotency) know no interface; an interface's folder knows no other's, except that /graphql
  // takes every kind of key and refuses each in its own interface's words (their .keys.ts).
  const edgeNode = (file: string) => {
    const [top, second, third] = file.split('/');
    if (top !== 'edge') return areaOf(file);
    if (second === 'interfaces' && third && !third.endsWith('.ts')) return `edge/interfaces/${third}`;
    return second && !second.endsWith('.ts') ? `edge/${second}` : 'edge';
  };
  const edgeGraph = importGraph(['edge'], edgeNode);

  it('keeps the shared edge parts below the interfaces', () => {
    for (const shared of ['edge/access', 'edge/rest', 'edge/federation', 'edge/idempotency']) {
      const up = [...(edgeGraph.get(shared) ?? [])].filter(([to]) => to.startsWith('edge/interfaces') || to === 'edge/interfaces').flatMap(([, why]) => why);
      expect(up, shared).toEqual([]);
    }
  });

  it("keeps each published interface in its folder: none imports another's, but /graphql reads the others' key rules", () => {
    const across = [...edgeGraph]
      .filter(([from]) => from.startsWith('edge/interfaces/'))
      .flatMap(([from, byTarget]) => [...byTarget].filter(([to]) => to.startsWith('edge/interfaces/') && to !== from).flatMap(([, why]) => why))
      .filter((why) => !/^edge\/interfaces\/graphql\/graphql\.keys\.ts -> edge\/interfaces\/(membership|traceroute)\/\1\.keys\.js$/.test(why));
    expect(across).toEqual([]);
  });
  // Inference: generation and its protocol (request and response types, validation, model
  // listing) know no wire format; each wire format (openai/, responses/, images/, embeddings/) is
  // an adapter over them, so a new one is a new folder, not a change to the core.
  const ADAPTERS = ['openai', 'responses', 'images', 'embeddings'].map((name) => `subgraphs/inference/${name}`);
  const inferenceNode = (file: string) => (file.startsWith('subgraphs/inference/') ? dirname(file) : areaOf(file));
  const inferenceGraph = importGraph(['subgraphs/inference'], inferenceNode);

  it('keeps inference generation and its protocol off the wire adapters', () => {
    for (const core of ['subgraphs/inference/generation', 'subgraphs/inference/protocol']) {
      const intoAdapters = [...(inferenceGraph.get(core) ?? [])].filter(([to]) => ADAPTERS.includes(to)).flatMap(([, why]) => why);
      expect(intoAdapters, core).toEqual([]);
    }
  });

  it('keeps the inference protocol below generation: protocol imports no generation code', () => {
    expect([...(inferenceGraph.get('subgraphs/inference/protocol')?.get('subgraphs/inference/generation') ?? [])]).toEqual([]);
  });
});
