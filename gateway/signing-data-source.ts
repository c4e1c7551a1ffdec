import { RemoteGraphQLDataSource, type GraphQLDataSourceProcessOptions } from '@apollo/gateway';
import type { Fetcher, FetcherResponse as UtilsFetcherResponse } from '@apollo/utils.fetcher';
import { GraphQLError } from 'graphql';
import type { Logger } from 'pino';
import { Agent, request as undiciRequest } from 'undici';
import { PRINCIPAL_HEADER, signPrincipal, type Principal } from '../core/principal.js';
import type { EdgeContext } from '../core/edge-context.js';

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

/** How long one signed header is reused for the same principal: far inside the subgraphs' 300 s acceptance. */
export const SIGNATURE_REUSE_MS = 10_000;
/** Principals whose signature is kept at once; past this the cache starts over (a burst of keys, not a leak). */
const MAX_SIGNED = 10_000;

/**
 * Every field of a principal in one string: a principal that changed (another plan, say) is
 * another id, so it is never sent an old header nor an upstream connection opened for the old one.
 */
export function principalId(principal: Principal): string {
  return `${principal.keyId}\u0000${principal.accountId}\u0000${principal.account}\u0000${principal.kind}\u0000${principal.mode}\u0000${principal.plan ?? ''}\u0000${principal.user ? `${principal.user.id}:${principal.user.role}` : ''}`;
}

/**
 * Signs principals, reusing a signature for SIGNATURE_REUSE_MS per principal. A request fans out
 * to several subgraph fetches and a client sends many requests: one HMAC per principal every
 * few seconds instead of one per fetch. Nothing is skipped: every fetch carries a header the
 * subgraph verifies in full, only its `iat` is up to SIGNATURE_REUSE_MS older.
 */
export class PrincipalSigner {
  private readonly signed = new Map<string, { header: string; at: number }>();

  constructor(
    private readonly internalSecret: string,
    private readonly reuseMs = SIGNATURE_REUSE_MS,
  ) {}

  sign(principal: Principal, now = Date.now()): string {
    const id = principalId(principal);
    const cached = this.signed.get(id);
    if (cached && now - cached.at < this.reuseMs && now >= cached.at) return cached.header;
    if (this.signed.size >= MAX_SIGNED) this.signed.clear();
    const header = signPrincipal(principal, this.internalSecret, now);
    this.signed.set(id, { header, at: now });
    return header;
  }
}

/**
 * Keep-alive connections to the subgraphs, shared by every data source of the process. undici's
 * request() skips the WHATWG Request/Response and stream layers of fetch(), which cost the edge
 * more per subgraph fetch than the call itself on a small answer.
 */
const subgraphAgent = new Agent({ keepAliveTimeout: 30_000, keepAliveMaxTimeout: 60_000, connect: { timeout: 5_000 } });

/** The little of a fetch Response that RemoteGraphQLDataSource reads (status, headers, body). */
function fetcherResponse(url: string, status: number, headers: Record<string, string | string[] | undefined>, body: { text(): Promise<string> }): FetcherResponse {
  const entries = Object.entries(headers).flatMap(([name, value]) => (value === undefined ? [] : (Array.isArray(value) ? value : [value]).map((v) => [name, v] as [string, string])));
  const responseHeaders = new Headers(entries);
  let text: Promise<string> | undefined;
  const read = () => (text ??= body.text());
  const response: UtilsFetcherResponse = {
    bodyUsed: false,
    url,
    redirected: false,
    status,
    ok: status >= 200 && status < 300,
    statusText: '',
    headers: responseHeaders,
    text: read,
    json: async () => JSON.parse(await read()),
    arrayBuffer: async () => new TextEncoder().encode(await read()).buffer as ArrayBuffer,
    clone: () => response,
  };
  return response as unknown as FetcherResponse;
}

/** A Fetcher over undici.request and the shared agent; errors keep undici's codes, which `unreachable` reads. */
export const subgraphFetcher: Fetcher = async (url, init) => {
  const response = await undiciRequest(url, {
    dispatcher: subgraphAgent,
    method: (init?.method ?? 'GET') as 'POST',
    headers: init?.headers,
    body: init?.body,
  });
  return fetcherResponse(url, response.statusCode, response.headers, response.body) as never;
};

/**
 * Sends every subgraph fetch with the request's principal, signed with the internal secret,
 * so a subgraph trusts nothing that did not pass the edge.
 */
export class SigningDataSource extends RemoteGraphQLDataSource<EdgeContext> {
  private readonly signer: PrincipalSigner;

  constructor(
    url: string,
    internalSecret: string | PrincipalSigner,
    /** The subgraph's name, for the log line that says it is down. */
    private readonly subgraph = 'a',
    private readonly logger?: Logger,
  ) {
    // undici with keep-alive; Apollo's default fetcher (make-fetch-happen) is several times slower.
    super({ url, fetcher: subgraphFetcher });
    this.signer = typeof internalSecret === 'string' ? new PrincipalSigner(internalSecret) : internalSecret;
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
    request.http?.headers.set(PRINCIPAL_HEADER, this.signer.sign(context.principal));
    request.http?.headers.set('x-request-id', context.requestId);
  }
}
