/**
 * Summarises a V8 .cpuprofile (from `node --cpu-prof`): self time by package or source file, and
 * the heaviest functions, so the top costs can be read without a profiler UI.
 * `tsx bench/cpu-profile-summary.ts <file.cpuprofile> [top=25]`. See docs/profiling.md.
 */
import { readFile } from 'node:fs/promises';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}
const [file, topArg] = process.argv.slice(2);
if (!file) throw new Error('usage: tsx bench/cpu-profile-summary.ts <file.cpuprofile> [top]');
const top = Number(topArg ?? 25);
const profile = JSON.parse(await readFile(file, 'utf8')) as { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] };

// Self time per node: each sample's delta goes to the node it hit.
const self = new Map<number, number>();
profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
const total = [...self.values()].reduce((a, b) => a + b, 0);

/** node_modules/<package> (scoped ones with their scope), our own files by path, V8 and Node internals by name. */
function owner(url: string, fn: string): string {
  if (!url) return `(${fn || 'native'})`;
  const modules = url.lastIndexOf('node_modules/');
  if (modules !== -1) {
    const parts = url.slice(modules + 'node_modules/'.length).split('/');
    return parts[0].startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0];
  }
  if (url.startsWith('node:')) return url;
  const repo = url.indexOf('/work/main/');
  return repo !== -1 ? url.slice(repo + '/work/main/'.length) : url;
}

const byOwner = new Map<string, number>();
const byFunction = new Map<string, number>();
for (const node of profile.nodes) {
  const time = self.get(node.id) ?? 0;
  if (!time) continue;
  const who = owner(node.callFrame.url, node.callFrame.functionName);
  byOwner.set(who, (byOwner.get(who) ?? 0) + time);
  const fn = `${node.callFrame.functionName || '(anonymous)'}  ${who}:${node.callFrame.lineNumber + 1}`;
  byFunction.set(fn, (byFunction.get(fn) ?? 0) + time);
}
const print = (title: string, map: Map<string, number>) => {
  console.log(`\n${title}`);
  for (const [name, time] of [...map].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    console.log(`${((100 * time) / total).toFixed(1).padStart(6)}%  ${(time / 1000).toFixed(0).padStart(7)} ms  ${name}`);
  }
};
console.log(`${file}: ${(total / 1e6).toFixed(1)} s sampled`);
print('self time by package or file', byOwner);
print('self time by function', byFunction);
