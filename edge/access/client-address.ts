import type { IncomingMessage } from 'node:http';

/** Express's compiled `trust proxy` (app.get('trust proxy fn')): whether the hop at `address`, `hop` steps from the edge, is a trusted proxy. */
export type TrustFunction = (address: string, hop: number) => boolean;

/**
 * The client's address as Express gives it in req.ip, for a request that never reaches Express (a
 * websocket's upgrade): the peer, then X-Forwarded-For from its right end, walked while each hop
 * is a trusted proxy.
 */
export function clientAddressOf(request: IncomingMessage, trust: TrustFunction): string | undefined {
  const peer = request.socket.remoteAddress;
  if (peer === undefined) return undefined;
  const header = request.headers['x-forwarded-for'];
  const forwarded = (Array.isArray(header) ? header.join(',') : (header ?? ''))
    .split(',')
    .map((hop) => hop.trim())
    .filter(Boolean)
    .reverse();
  const hops = [peer, ...forwarded];
  for (let i = 0; i < hops.length - 1; i++) if (!trust(hops[i], i)) return hops[i];
  return hops[hops.length - 1];
}
