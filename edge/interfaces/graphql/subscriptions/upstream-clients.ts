import { createClient, type Client } from 'graphql-ws';
import { GROUPED_EVENTS_PARAM } from '../../../../core/grouped-events.js';
import { PRINCIPAL_HEADER, principalId, signPrincipal, type Principal } from '../../../../core/principal.js';
import { generateId, GroupedEventsWebSocket } from './grouped-frames.js';

/**
 * graphql-ws connections to the subgraphs, one per subgraph and principal, shared by every client
 * socket of that principal (a thousand dashboards of one account are one upstream connection
 * carrying a thousand subscriptions, not a thousand connections). Each carries the principal,
 * signed when it connects, so a subgraph still authorises every subscription as that principal.
 * Counted by the sockets that use it; the last one to let go closes it.
 */
const shared = new Map<string, { client: Client; users: number }>();

function acquire(url: string, principal: Principal, internalSecret: string): { key: string; client: Client } {
  // The secret is part of the key: edges of one process with different secrets never share.
  const key = `${url}\u0000${internalSecret}\u0000${principalId(principal)}`;
  let entry = shared.get(key);
  if (!entry) {
    entry = {
      client: createClient({
        url: url.replace(/^http/, 'ws'),
        // Events that several subscriptions receive alike come as one frame (grouped-frames.ts).
        webSocketImpl: GroupedEventsWebSocket,
        generateID: generateId,
        connectionParams: () => ({ [PRINCIPAL_HEADER]: signPrincipal(principal, internalSecret), [GROUPED_EVENTS_PARAM]: true }),
        // Connected while any subscription runs on it, closed with the last one, opened again with the next.
        lazy: true,
        // Subscriptions are at-most-once: a broken upstream ends them; clients resubscribe and refetch.
        retryAttempts: 0,
      }),
      users: 0,
    };
    shared.set(key, entry);
  }
  entry.users += 1;
  return { key, client: entry.client };
}

async function release(key: string): Promise<void> {
  const entry = shared.get(key);
  if (!entry) return;
  entry.users -= 1;
  if (entry.users > 0) return;
  shared.delete(key);
  await entry.client.dispose();
}

/**
 * The upstream connections one client socket uses, taken from the shared ones when first used
 * and let go with the socket. Ending the socket ends its own subscriptions (each relay returns
 * its upstream operation); the connection stays for the principal's other sockets.
 */
export class UpstreamClients {
  private readonly clients = new Map<string, { key: string; client: Client }>();

  constructor(
    private readonly subgraphUrls: Record<string, string>,
    private readonly principal: Principal,
    private readonly internalSecret: string,
  ) {}

  for(serviceName: string): Client {
    let taken = this.clients.get(serviceName);
    if (!taken) {
      const url = this.subgraphUrls[serviceName];
      if (!url) throw new Error(`No URL configured for subgraph "${serviceName}"`);
      taken = acquire(url, this.principal, this.internalSecret);
      this.clients.set(serviceName, taken);
    }
    return taken.client;
  }

  async dispose(): Promise<void> {
    const taken = [...this.clients.values()];
    this.clients.clear();
    await Promise.all(taken.map(({ key }) => release(key)));
  }
}
