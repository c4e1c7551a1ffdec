import net from 'node:net';

/** How long a subgraph fetch waits for its answer before the subgraph's host is asked whether it is still there. */
export const LIVENESS_INTERVAL_MS = 5_000;

/** Connects once to host:port; undefined when it accepted, else the socket's error code (a timeout as undici's connect timeout). */
function connectFailure(host: string, port: number, timeoutMs: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port, timeout: timeoutMs });
    socket.once('connect', () => {
      socket.destroy();
      resolve(undefined);
    });
    socket.once('timeout', () => {
      socket.destroy();
      resolve('UND_ERR_CONNECT_TIMEOUT');
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'ECONNRESET'));
  });
}

/** Each subgraph URL's host and port, parsed once: the few subgraph URLs are fetched on every request. */
const hosts = new Map<string, { target: URL; host: string; port: number }>();
function hostOf(url: string): { target: URL; host: string; port: number } {
  let known = hosts.get(url);
  if (!known) {
    const target = new URL(url);
    known = { target, host: target.hostname.replace(/^\[|\]$/g, ''), port: Number(target.port) || (target.protocol === 'https:' ? 443 : 80) };
    if (hosts.size < 64) hosts.set(url, known);
  }
  return known;
}

/**
 * Runs `request` with a signal aborted once the subgraph's host stops accepting connections
 * while the request waits. A host whose link is cut, or that died without closing its sockets,
 * leaves a kept-alive connection silent for many minutes (TCP retransmits, no RST comes); a slow
 * answer from a live host (a long generation) is not cut short, since that host still accepts.
 * The abort's reason carries the socket's code, which the data source reads as unreachable.
 */
export async function whileHostAnswers<T>(url: string, request: (signal: AbortSignal) => Promise<T>, intervalMs = LIVENESS_INTERVAL_MS): Promise<T> {
  const { target, host, port } = hostOf(url);
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const check = async () => {
    const code = await connectFailure(host, port, intervalMs);
    if (controller.signal.aborted || timer === undefined) return;
    if (code) controller.abort(Object.assign(new Error(`the subgraph's host ${target.host} does not answer (${code})`), { code }));
    else timer = setTimeout(check, intervalMs).unref();
  };
  timer = setTimeout(check, intervalMs).unref();
  try {
    return await request(controller.signal);
  } finally {
    clearTimeout(timer);
    timer = undefined;
  }
}
