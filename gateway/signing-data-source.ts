import { RemoteGraphQLDataSource, type GraphQLDataSourceProcessOptions } from '@apollo/gateway';
import { GraphQLError } from 'graphql';
import type { Logger } from 'pino';
import { PRINCIPAL_HEADER, signPrincipal } from '../subgraphs/shared/principal.js';
import type { EdgeContext } from './edge-context.js';

type FetcherResponse = Parameters<RemoteGraphQLDataSource['errorFromResponse']>[0];
type GatewayGraphQLResponse = Awaited<ReturnType<RemoteGraphQLDataSource['process']>>;

/** What a client reads for the fields of a subgraph that is down. */
export const UNAVAILABLE_MESSAGE = 'A service of the platform is unavailable; try again shortly';

const UNREACHABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'UND_ERR_SOCKET', 'UND_ERR_CONNECT_TIMEOUT', 'EPIPE']);

/** Whether fetch failed to reach the subgraph at all (Node's fetch: a TypeError whose cause has the socket's code). */
function unreachable(error: unknown): boolean {
  let cause: unknown = error;
  for (let depth = 0; cause && depth < 4; depth++) {
    const code = (cause as { code?: unknown }).code;
    if (typeof code === 'string' && UNREACHABLE_CODES.has(code)) return true;
    cause = (cause as { cause?: unknown }).cause;
  }
  return false;
}

/**
 * Sends every subgraph fetch with the request's principal, signed with the internal secret,
 * so a subgraph trusts nothing that did not pass the edge.
 */
export class SigningDataSource extends RemoteGraphQLDataSource<EdgeContext> {
  constructor(
    url: string,
    private readonly internalSecret: string,
    /** The subgraph's name, for the log line that says it is down. */
    private readonly subgraph = 'a',
    private readonly logger?: Logger,
  ) {
    // Node's own fetch (undici) keeps connections alive; the default fetcher is several times slower.
    super({ url, fetcher: fetch as never });
  }

  /**
   * A subgraph that cannot be reached (stopped, restarting, crashed) is SERVICE_UNAVAILABLE: the
   * fields it owns come back null with this error beside the others' data, its REST paths answer
   * 503, and the next request tries it again, so it is back as soon as it is.
   */
  override async process(options: GraphQLDataSourceProcessOptions<EdgeContext>): Promise<GatewayGraphQLResponse> {
    try {
      return await super.process(options);
    } catch (error) {
      if (!unreachable(error)) throw error;
      const requestId = 'requestId' in options.context && typeof options.context.requestId === 'string' ? options.context.requestId : undefined;
      // The client learns that a part is down, not which address refused: that goes to the log.
      this.logger?.error({ err: error, subgraph: this.subgraph, url: this.url, requestId }, 'subgraph unreachable');
      throw new GraphQLError(UNAVAILABLE_MESSAGE, { extensions: { code: 'SERVICE_UNAVAILABLE', reason: 'service_unavailable', ...(requestId ? { requestId } : {}) } });
    }
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
