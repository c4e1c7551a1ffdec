import { readdirSync, readFileSync } from 'node:fs';

/** A process's parent id and state from /proc (Linux), or undefined when it is gone. */
function stat(pid: number): { ppid: number; state: string } | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name is in parentheses and may hold spaces or parentheses itself.
    const [state, ppid] = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return { ppid: Number(ppid), state };
  } catch {
    return undefined;
  }
}

/** Whether `pid` runs: a zombie (exited, not yet reaped by a parent that may never reap it) does not. */
export function running(pid: number): boolean {
  const found = stat(pid);
  return found !== undefined && found.state !== 'Z' && found.state !== 'X';
}

/** `pid` and every process below it now, children before grandchildren. */
export function processTree(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const found = stat(Number(entry));
    if (found) children.set(found.ppid, [...(children.get(found.ppid) ?? []), Number(entry)]);
  }
  const tree = [pid];
  for (let i = 0; i < tree.length; i++) tree.push(...(children.get(tree[i]) ?? []));
  return tree;
}
