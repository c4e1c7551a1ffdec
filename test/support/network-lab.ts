import { execFile, execFileSync } from 'node:child_process';
import { appendFile } from 'node:fs/promises';
import net from 'node:net';
import { promisify } from 'node:util';
import { initialiseCluster, postgresPrograms, postgresRunAs } from '../../platform/embedded-postgres.js';
import { spawnService, type ServiceProcess } from './service-process.js';

/*
 * Hosts simulated with network namespaces: each host is a namespace with one veth to a bridge
 * that lives in a switch namespace of its own, so nothing is added to this machine's own network
 * but one veth, which makes the test process a client host on the same segment. A host "goes
 * down" as a machine would: its link is cut and every process in its namespace is killed.
 */

const run = promisify(execFile);

/** Why network namespaces cannot be used here, or undefined when they can. */
export function namespacesMissing(): string | undefined {
  for (const program of ['ip', 'setpriv']) {
    try {
      execFileSync('sh', ['-c', `command -v ${program}`], { stdio: 'pipe' });
    } catch {
      return `${program} is not installed (iproute2, util-linux)`;
    }
  }
  if (process.getuid?.() !== 0) return 'network namespaces need root';
  const probe = `nsprobe${process.pid % 100_000}`;
  try {
    execFileSync('ip', ['netns', 'add', probe], { stdio: 'pipe' });
    execFileSync('ip', ['netns', 'del', probe], { stdio: 'pipe' });
  } catch (error) {
    return `network namespaces are not permitted here (${String((error as { stderr?: Buffer }).stderr ?? error).trim()})`;
  }
  return undefined;
}

/** Whether something accepts TCP connections at host:port. */
export function accepts(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host, timeout: 2000 });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(false));
  });
}

/** Waits until host:port accepts connections, failing early when `process` exits first. */
export async function waitForListener(host: string, port: number, what: string, process?: ServiceProcess, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let exitCode: number | null | undefined;
  void process?.exited.then((code) => (exitCode = code));
  while (!(await accepts(host, port))) {
    if (exitCode !== undefined) throw new Error(`${what} exited with ${exitCode}:\n${process?.output()}`);
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what} at ${host}:${port}:\n${process?.output() ?? ''}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export interface NetworkLab {
  /** The test process's own address on the segment: the client host. */
  clientAddress: string;
  /** The address of a host by name. */
  address(host: string): string;
  /** Starts `command` inside the host's namespace (root), collecting its output. */
  spawn(host: string, command: string, args: string[], env: NodeJS.ProcessEnv): ServiceProcess;
  /** Cuts the host's link to the switch and kills every process in its namespace; resolves once they are gone. */
  takeDown(host: string): Promise<void>;
  /** Puts the host's link back. */
  bringUp(host: string): Promise<void>;
  /** Starts PostgreSQL on the host, listening on its address and taking password logins from the segment; returns the superuser's URL. */
  startPostgres(host: string, dataDir: string): Promise<{ url: string; process: ServiceProcess }>;
  /** Removes every namespace and link the lab made, killing what runs in them. */
  destroy(): Promise<void>;
}

/**
 * Builds a lab of `hosts` on 10.<subnet>.0.0/24 under namespace names starting with `prefix`
 * (unique per run: labs of runs side by side do not meet). Host i gets 10.<subnet>.0.<i + 2>,
 * the client 10.<subnet>.0.100.
 */
export async function createNetworkLab(prefix: string, subnet: number, hosts: readonly string[]): Promise<NetworkLab> {
  const ns = (host: string) => `${prefix}-${host}`;
  const switchNs = `${prefix}-sw`;
  const addresses = new Map(hosts.map((host, i) => [host, `10.${subnet}.0.${i + 2}`]));
  const clientAddress = `10.${subnet}.0.100`;
  // Interface names are at most 15 characters: the host's index, not its name.
  const hostSide = (i: number) => `${prefix}h${i}`;
  const switchSide = (i: number) => `${prefix}s${i}`;
  const clientSide = `${prefix}hc`;
  const clientSwitchSide = `${prefix}sc`;
  const ip = (...args: string[]) => run('ip', args);
  const made: string[] = [];

  const destroy = async () => {
    for (const host of hosts) await killAll(ns(host));
    await ip('link', 'del', clientSide).catch(() => undefined);
    for (const name of [...made].reverse()) await ip('netns', 'del', name).catch(() => undefined);
  };

  try {
    await ip('netns', 'add', switchNs);
    made.push(switchNs);
    await ip('-n', switchNs, 'link', 'add', 'br0', 'type', 'bridge');
    await ip('-n', switchNs, 'link', 'set', 'br0', 'up');
    for (const [i, host] of hosts.entries()) {
      await ip('netns', 'add', ns(host));
      made.push(ns(host));
      await ip('link', 'add', hostSide(i), 'type', 'veth', 'peer', 'name', switchSide(i));
      await ip('link', 'set', hostSide(i), 'netns', ns(host));
      await ip('link', 'set', switchSide(i), 'netns', switchNs);
      await ip('-n', switchNs, 'link', 'set', switchSide(i), 'master', 'br0', 'up');
      await ip('-n', ns(host), 'addr', 'add', `${addresses.get(host)}/24`, 'dev', hostSide(i));
      await ip('-n', ns(host), 'link', 'set', hostSide(i), 'up');
      await ip('-n', ns(host), 'link', 'set', 'lo', 'up');
    }
    await ip('link', 'add', clientSide, 'type', 'veth', 'peer', 'name', clientSwitchSide);
    await ip('link', 'set', clientSwitchSide, 'netns', switchNs);
    await ip('-n', switchNs, 'link', 'set', clientSwitchSide, 'master', 'br0', 'up');
    await ip('addr', 'add', `${clientAddress}/24`, 'dev', clientSide);
    await ip('link', 'set', clientSide, 'up');
  } catch (error) {
    await destroy();
    throw error;
  }

  const address = (host: string) => {
    const found = addresses.get(host);
    if (!found) throw new Error(`no host ${host} in the lab`);
    return found;
  };

  return {
    clientAddress,
    address,
    spawn: (host, command, args, env) => spawnService('ip', ['netns', 'exec', ns(host), command, ...args], env),
    takeDown: async (host) => {
      await ip('-n', switchNs, 'link', 'set', switchSide(hosts.indexOf(host)), 'down');
      await killAll(ns(host));
    },
    bringUp: async (host) => {
      await ip('-n', switchNs, 'link', 'set', switchSide(hosts.indexOf(host)), 'up');
    },
    startPostgres: async (host, dataDir) => {
      const runAs = await postgresRunAs();
      const { postgres } = await postgresPrograms();
      const password = `lab-${process.pid}-${Date.now()}`;
      await initialiseCluster({ dir: dataDir, superuser: 'lab', password, runAs });
      await appendFile(`${dataDir}/pg_hba.conf`, `host all all 10.${subnet}.0.0/24 scram-sha-256\n`);
      const drop = runAs ? ['setpriv', `--reuid=${runAs.uid}`, `--regid=${runAs.gid}`, '--clear-groups'] : [];
      const [command, ...prefixArgs] = [...drop, postgres];
      const child = spawnService(
        'ip',
        ['netns', 'exec', ns(host), command, ...prefixArgs, '-D', dataDir, '-p', '5432', '-c', `listen_addresses=${address(host)}`, '-c', 'unix_socket_directories=', '-c', 'lc_messages=C'],
        { ...process.env, LC_MESSAGES: 'C' },
      );
      await waitForListener(address(host), 5432, 'PostgreSQL', child);
      return { url: `postgres://lab:${password}@${address(host)}:5432/postgres`, process: child };
    },
    destroy,
  };
}

/** Kills every process in the namespace with SIGKILL and waits until none is left. */
async function killAll(namespace: string): Promise<void> {
  for (;;) {
    const pids = await run('ip', ['netns', 'pids', namespace]).then(
      ({ stdout }) => stdout.split('\n').map(Number).filter((pid) => pid > 0),
      () => [] as number[],
    );
    if (pids.length === 0) return;
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone already
      }
    }
    await new Promise((r) => setTimeout(r, 20));
  }
}
