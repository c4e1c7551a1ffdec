import { RemoteGraphQLDataSource, type GraphQLDataSourceProcessOptions } from '@apollo/gateway';
import { GraphQLError } from 'graphql';
import { PRINCIPAL_HEADER, signPrincipal } from '../subgraphs/shared/principal.js';
import type { EdgeContext } from './edge-context.js';

type FetcherResponse = Parameters<RemoteGraphQLDataSource['errorFromResponse']>[0];

/**
 * Sends every subgraph fetch with the request's principal, signed with the internal secret,
 * so a subgraph trusts nothing that did not pass the edge.
 */
export class SigningDataSource extends RemoteGraphQLDataSource<EdgeContext> {
  constructor(
    url: string,
    private readonly internalSecret: string,
  ) {
    // Node's own fetch (undici) keeps connections alive; the default fetcher is several times slower.
    super({ url, fetcher: fetch as never });
  }

  /**
   * A subgraph that refuses a whole request (401, 403) answers with a GraphQL error body: pass
   * its message and code on, never the subgraph's address or raw reply, which Apollo would.
   */
  override async errorFromResponse(response: FetcherResponse): Promise<GraphQLError> {
    const body = (await this.parseBody(response).catch(() => undefined)) as
      | { errors?: { message?: string; extensions?: Record<string, unknown> }[] }
      | undefined;
    const first = body?.errors?.[0];
    const fallback = response.status === 401 ? 'UNAUTHENTICATED' : response.status === 403 ? 'FORBIDDEN' : 'INTERNAL_SERVER_ERROR';
    const code = typeof first?.extensions?.code === 'string' ? first.extensions.code : fallback;
    const reason = first?.extensions?.reason;
    return new GraphQLError(code === 'INTERNAL_SERVER_ERROR' ? 'A service of the platform failed' : (first?.message ?? code), {
      extensions: { code, ...(typeof reason === 'string' ? { reason } : {}) },
    });
  }

  override willSendRequest({ request, context }: GraphQLDataSourceProcessOptions<EdgeContext>): void {
    // Health checks and schema loading run without a request context; they carry no principal.
    if (!('principal' in context) || !context.principal) return;
    request.http?.headers.set(PRINCIPAL_HEADER, signPrincipal(context.principal, this.internalSecret));
    request.http?.headers.set('x-request-id', context.requestId);
  }
}
