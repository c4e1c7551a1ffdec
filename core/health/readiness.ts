const CHECK_TIMEOUT_MS = 2000;

/** One dependency a service needs to serve traffic; it resolves when the dependency answers. */
export type ReadinessProbe = () => Promise<unknown>;

/** What /readyz answers: every probe's verdict, "ok" or why not. */
export interface Readiness {
  ready: boolean;
  checks: Record<string, string>;
}

/**
 * Runs every probe at once, each bounded by a timeout: a dependency that hangs (Redis stopped
 * while ioredis reconnects) must fail the check, not hold the load balancer's probe open.
 */
export async function readinessOf(probes: Record<string, ReadinessProbe>, timeoutMs = CHECK_TIMEOUT_MS): Promise<Readiness> {
  const entries = await Promise.all(Object.entries(probes).map(async ([name, probe]) => [name, await verdict(probe, timeoutMs)] as const));
  return { ready: entries.every(([, result]) => result === 'ok'), checks: Object.fromEntries(entries) };
}

async function verdict(probe: ReadinessProbe, timeoutMs: number): Promise<string> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      probe(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error('timed out')), timeoutMs);
      }),
    ]);
    return 'ok';
  } catch (error) {
    return reasonOf(error);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * A service that does not accept connections (stopped, crashed, restarting) is "unreachable
 * (ECONNREFUSED)", not fetch's bare "fetch failed".
 */
function reasonOf(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const code = (error.cause as NodeJS.ErrnoException | undefined)?.code;
  return code ? `unreachable (${code})` : error.message;
}

/** A probe of another service's /readyz (an edge's subgraphs). */
export function httpReadiness(url: string): ReadinessProbe {
  return async () => {
    const response = await fetch(new URL('/readyz', url));
    await response.body?.cancel();
    if (!response.ok) throw new Error(`answered ${response.status}`);
  };
}
