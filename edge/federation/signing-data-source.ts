import { RemoteGraphQLDataSource, type GraphQLDataSourceProcessOptions } from '@apollo/gateway';
import type { Fetcher, FetcherResponse as UtilsFetcherResponse } from '@apollo/utils.fetcher';
import { GraphQLError } from 'graphql';
import type { Logger } from 'pino';
import { Agent, request as undiciRequest } from 'undici';
import { IDEMPOTENCY_KEY_HEADER, IDEMPOTENT_REPLAYED_HEADER } from '../../core/idempotency.js';
import { PRINCIPAL_HEADER, principalId, signPrincipal, type Principal } from '../../core/principal.js';
import type { EdgeContext } from '../../core/edge-context.js';
import { ResponseHeaders, type RawHeaders } from './response-headers.js';
import { whileHostAnswers } from './subgraph-liveness.js';
import { injectTraceHeaders, inSpan, SpanKind, tracerOf, tracingOn } from '../../core/telemetry/tracing.js';
import { subgraphFetchDuration, subgraphFetchErrors } from '../../core/metrics/platform-metrics.js';

type FetcherResponse = Parameters<RemoteGraphQLDataSource['errorFromResponse']>[0];
type GatewayGraphQLResponse = Awaited<ReturnType<RemoteGraphQLDataSource['process']>>;

/** What a client reads for the fields of a subgraph that is down. */
const fetchTracer = tracerOf('gateway');

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
function fetcherResponse(url: string, status: number, headers: RawHeaders, body: { text(): Promise<string> }): FetcherResponse {
  let text: Promise<string> | undefined;
  const read = () => (text ??= body.text());
  const response: UtilsFetcherResponse = {
    bodyUsed: false,
    url,
    redirected: false,
    status,
    ok: status >= 200 && status < 300,
    statusText: '',
    headers: new ResponseHeaders(headers),
    text: read,
    json: async () => JSON.parse(await read()),
    arrayBuffer: async () => new TextEncoder().encode(await read()).buffer as ArrayBuffer,
    clone: () => response,
  };
  return response as unknown as FetcherResponse;
}

/** A Fetcher over undici.request and the shared agent; errors keep undici's codes (or a gone host's), which `unreachable` reads. */
export const subgraphFetcher: Fetcher = async (url, init) => {
  const response = await whileHostAnswers(url, (signal) =>
    undiciRequest(url, {
      dispatcher: subgraphAgent,
      method: (init?.method ?? 'GET') as 'POST',
      headers: init?.headers,
      body: init?.body,
      signal,
    }),
  );
  return fetcherResponse(url, response.statusCode, response.headers, response.body) as never;
};

/**
 * A subgraph query (never a mutation) whose body the gateway printed: `{"query":"query …` or the
 * shorthand `{"query":"{…`. Anything else, mutations included, is sent as it is.
 */
const QUERY_BODY = /^\{"query":"(?:query\b|\{)/;

/**
 * In-flight deduplication of identical subgraph queries, as Apollo Router's `deduplicate_query`
 * and Hive Gateway's executor do: while one fetch of a query is on its way, another with the
 * same URL, body and principal header waits for the same answer instead of being sent again.
 * Every client request still passes every rule of the edge (key, limits, armor) and plans its own
 * fetches; only the wire call is shared, between callers the subgraph would treat identically
 * (same principal, same document, same variables). Each caller gets its own response to parse.
 * The shared call carries the first caller's x-request-id; the others' ids reach the edge's log only.
 */
export function deduplicatingFetcher(fetcher: Fetcher = subgraphFetcher): Fetcher {
  const inflight = new Map<string, Promise<{ status: number; headers: RawHeaders; text: string }>>();
  return async (url, init) => {
    const body = init?.body;
    const headers = init?.headers as Record<string, string> | undefined;
    const principal = headers?.[PRINCIPAL_HEADER];
    if (typeof body !== 'string' || !principal || !QUERY_BODY.test(body)) return fetcher(url, init);
    const key = `${url}\u0000${principal}\u0000${body}`;
    let shared = inflight.get(key);
    if (!shared) {
      shared = (async () => {
        const response = await fetcher(url, init);
        const headers = response.headers instanceof ResponseHeaders ? response.headers.raw : Object.fromEntries(response.headers);
        return { status: response.status, headers, text: await response.text() };
      })();
      inflight.set(key, shared);
      const forget = () => inflight.delete(key);
      shared.then(forget, forget);
    }
    const answer = await shared;
    return fetcherResponse(url, answer.status, answer.headers, { text: async () => answer.text }) as never;
  };
}

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
    /** Share identical in-flight queries (SUBGRAPH_QUERY_DEDUPLICATION; on by default). */
    dedupe = true,
  ) {
    // undici with keep-alive; Apollo's default fetcher (make-fetch-happen) is several times slower.
    super({ url, fetcher: dedupe ? deduplicatingFetcher() : subgraphFetcher });
    this.signer = typeof internalSecret === 'string' ? new PrincipalSigner(internalSecret) : internalSecret;
  }

  /**
   * A subgraph that cannot be reached (stopped, restarting, crashed) is SERVICE_UNAVAILABLE: the
   * fields it owns come back null with this error beside the others' data, its REST paths answer
   * 503, and the next request tries it again, so it is back as soon as it is.
   */
  override async process(options: GraphQLDataSourceProcessOptions<EdgeContext>): Promise<GatewayGraphQLResponse> {
    const started = performance.now();
    try {
      // A CLIENT span per fetch of the plan; its traceparent goes with the request (send).
      // With tracing off the span would be a no-op that still costs a context switch per fetch.
      const response = tracingOn()
        ? await inSpan(fetchTracer, `subgraph ${this.subgraph}`, { kind: SpanKind.CLIENT, attributes: { 'graphql.subgraph': this.subgraph } }, () => this.send(options))
        : await this.send(options);
      subgraphFetchDuration.observe({ subgraph: this.subgraph }, (performance.now() - started) / 1000);
      return response;
    } catch (error) {
      subgraphFetchDuration.observe({ subgraph: this.subgraph }, (performance.now() - started) / 1000);
      subgraphFetchErrors.inc({ subgraph: this.subgraph, reason: unreachable(error) ? 'unreachable' : 'refused' });
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

  /**
   * One subgraph fetch, as RemoteGraphQLDataSource.process makes it, without what the edge does
   * not use and pays for on every fetch: a node-fetch Request and Headers built only for hooks
   * we leave empty (their URL parsing alone was 2% of a REST profile), APQ (off) and the
   * subgraph's cache-control hints (no subgraph sends any). The body keeps Apollo's shape and
   * key order, `{"query":…,"variables":…}`, which deduplication reads.
   */
  private async send({ request, context }: GraphQLDataSourceProcessOptions<EdgeContext>): Promise<GatewayGraphQLResponse> {
    if (!request.query) throw new Error('Missing query');
    const headers: Record<string, string> = {};
    if (request.http?.headers) for (const [name, value] of request.http.headers) headers[name.toLowerCase()] = value;
    headers['content-type'] = 'application/json';
    injectTraceHeaders(headers);
    // Health checks and schema loading run without a request context; they carry no principal.
    if ('principal' in context && context.principal) {
      headers[PRINCIPAL_HEADER] = this.signer.sign(context.principal);
      headers['x-request-id'] = context.requestId;
      // The subgraph keeps a keyed mutation's answer with its writes and replays it to a retry.
      if (context.idempotency) headers[IDEMPOTENCY_KEY_HEADER] = context.idempotency.key;
    }
    const { http: _http, query, ...rest } = request;
    const response = await this.fetcher(this.url, { method: 'POST', headers, body: JSON.stringify({ query, ...rest }) });
    if (!response.ok) throw await this.errorFromResponse(response as unknown as FetcherResponse);
    if ('idempotency' in context && context.idempotency && response.headers.get(IDEMPOTENT_REPLAYED_HEADER) === 'true') context.idempotency.replayed = true;
    const body = await this.parseBody(response as unknown as FetcherResponse);
    if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new Error(`Expected JSON response body, but received: ${String(body)}`);
    return { ...(body as object), http: response } as GatewayGraphQLResponse;
  }
}
