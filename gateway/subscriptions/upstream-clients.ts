import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { PRINCIPAL_HEADER, signPrincipal, type Principal } from '../../subgraphs/shared/principal.js';

/**
 * The graphql-ws connections one client socket needs to the subgraphs, opened when first used
 * and closed with the socket. Each carries the socket's principal, signed when it connects.
 */
export class UpstreamClients {
  private readonly clients = new Map<string, Client>();

  constructor(
    private readonly subgraphUrls: Record<string, string>,
    private readonly principal: Principal,
    private readonly internalSecret: string,
  ) {}

  for(serviceName: string): Client {
    let client = this.clients.get(serviceName);
    if (!client) {
      const url = this.subgraphUrls[serviceName];
      if (!url) throw new Error(`No URL configured for subgraph "${serviceName}"`);
      client = createClient({
        url: url.replace(/^http/, 'ws'),
        webSocketImpl: WebSocket,
        connectionParams: () => ({ [PRINCIPAL_HEADER]: signPrincipal(this.principal, this.internalSecret) }),
        lazy: true,
        // Subscriptions are at-most-once: a broken upstream ends them; clients resubscribe and refetch.
        retryAttempts: 0,
      });
      this.clients.set(serviceName, client);
    }
    return client;
  }

  async dispose(): Promise<void> {
    await Promise.all([...this.clients.values()].map((client) => client.dispose()));
    this.clients.clear();
  }
}
