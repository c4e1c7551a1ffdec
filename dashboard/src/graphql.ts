import { Client, cacheExchange, fetchExchange, subscriptionExchange } from 'urql';
import { createClient as createWsClient, type Client as WsClient } from 'graphql-ws';
import { currentCsrfToken, onSessionChange, sessionExpired } from './api';

/** Which principal the session acts as on the graph (header x-dashboard-kind). */
export type GraphKind = 'live' | 'test' | 'admin';

const graphqlUrl = () => new URL('/graphql', document.baseURI);

let sockets = new Map<GraphKind, WsClient>();
let clients = new Map<GraphKind, Client>();

/**
 * One urql client per kind, so live and test answers never share a cache. Queries and mutations
 * go over fetch with the session cookie; subscriptions over graphql-ws, authenticated by the
 * cookie plus connectionParams (the CSRF token and the kind).
 */
export function graphClient(kind: GraphKind): Client {
  const existing = clients.get(kind);
  if (existing) return existing;
  const client = new Client({
    url: graphqlUrl().toString(),
    requestPolicy: 'cache-and-network',
    // urql would send queries as GET, which Apollo's CSRF prevention refuses without a preflight header.
    preferGetMethod: false,
    fetch: async (input, init) => {
      const response = await fetch(input, init);
      if (response.status === 401) sessionExpired();
      return response;
    },
    fetchOptions: () => ({
      credentials: 'same-origin',
      headers: { 'x-csrf-token': currentCsrfToken(), 'x-dashboard-kind': kind },
    }),
    exchanges: [
      cacheExchange,
      fetchExchange,
      subscriptionExchange({
        forwardSubscription: (request) => ({
          subscribe: (sink) => ({ unsubscribe: socket(kind).subscribe({ ...request, query: request.query ?? '' }, sink) }),
        }),
      }),
    ],
  });
  clients.set(kind, client);
  return client;
}

function socket(kind: GraphKind): WsClient {
  let ws = sockets.get(kind);
  if (!ws) {
    const url = graphqlUrl();
    url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
    ws = createWsClient({
      url: url.toString(),
      lazy: true,
      retryAttempts: 5,
      connectionParams: () => ({ csrfToken: currentCsrfToken(), kind }),
    });
    sockets.set(kind, ws);
  }
  return ws;
}

/** Forgets every client and closes sockets: after sign-out nothing of the session stays. */
export function resetGraphClients(): void {
  for (const ws of sockets.values()) void ws.dispose();
  sockets = new Map();
  clients = new Map();
}
onSessionChange(resetGraphClients);

/** The first error of an urql result as one sentence for people, with the platform's reason when given. */
export function graphErrorMessage(error: { graphQLErrors: { message: string; extensions?: Record<string, unknown> }[]; networkError?: Error; message: string } | undefined): string | undefined {
  if (!error) return undefined;
  const first = error.graphQLErrors[0];
  if (first) {
    const reason = first.extensions?.reason ?? first.extensions?.code;
    return reason ? `${first.message} (${String(reason)})` : first.message;
  }
  return error.networkError ? `The platform cannot be reached: ${error.networkError.message}` : error.message;
}
