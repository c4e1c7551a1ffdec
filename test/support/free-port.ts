import { readFileSync } from 'node:fs';
import net from 'node:net';

/**
 * Ports below the kernel's ephemeral range (net.ipv4.ip_local_port_range, 32768–60999 unless
 * changed). A port from `listen(0)` is free again the moment the probe closes it, and any other
 * process's `listen(0)` may be handed it before the service it was meant for binds it; an
 * outgoing connection's source port blocks a bind too. The kernel hands out neither from below its
 * range, so a port taken from there stays free until someone asks for it by number.
 */
const LOWEST = 10_000;
const EPHEMERAL_LOW = (() => {
  try {
    return Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]) || 32_768;
  } catch {
    return 32_768;
  }
})();
/**
 * Each vitest worker (VITEST_POOL_ID, 1 up) draws from a slice of its own, so two test files
 * running at once never draw the same port. Other processes (the global set-up, benches and the
 * instances they start) draw from the slices above the workers', by process id.
 */
const SLICE = 1_000;
const SLICES = Math.max(2, Math.floor((EPHEMERAL_LOW - LOWEST) / SLICE));
const WORKER_SLICES = Math.min(8, SLICES - 1);
const poolId = Number(process.env.VITEST_POOL_ID);
const slice = poolId > 0 ? poolId % WORKER_SLICES : WORKER_SLICES + (process.pid % (SLICES - WORKER_SLICES));
let next = Math.floor(Math.random() * SLICE);

function listensFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** A TCP port on loopback that nothing listens on right now, and that the kernel will not hand to anyone else. */
export async function freePort(): Promise<number> {
  // Round the slice: a port this process handed out is not offered again until the slice wraps.
  for (let tried = 0; tried < SLICE; tried++) {
    const port = LOWEST + slice * SLICE + (next++ % SLICE);
    if (await listensFree(port)) return port;
  }
  throw new Error(`no free port in ${LOWEST + slice * SLICE}–${LOWEST + slice * SLICE + SLICE - 1}`);
}
