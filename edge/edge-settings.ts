// The settings the edge is built with, declared here so the edge depends on nothing above it;
// platform/config.ts reads them from the environment and passes them in.

import type { MikroORM } from '@mikro-orm/postgresql';
import type express from 'express';
import type { Logger } from 'pino';

/** Where each REST interface is mounted. */
export interface RestBases {
  membership: string;
  traceroute: string;
  inferenceText: string;
  inferenceImage: string;
  inferenceProxy: string;
  inferenceGateway: string;
}

/** Requests per minute: live and test per account and mode, inference and admin per key, anonymous per client address. */
export interface RateLimits {
  livePerMinute: number;
  testPerMinute: number;
  inferencePerMinute: number;
  anonymousPerMinute: number;
}

/** Caps on graphql-ws subscriptions at the gateway and its keep-alive ping interval. */
export interface SubscriptionLimits {
  perSocket: number;
  perInstance: number;
  keepAliveMs: number;
  /** How often the keys of open sockets are read again, so a disabled or expired key loses its socket (WS_KEY_RECHECK_MS, 30 s by default, at most 60 s). */
  keyRecheckMs: number;
  /**
   * Bytes a socket may leave unsent (its client not reading) before it is closed with 1013 (WS_MAX_UNSENT_BYTES,
   * 1 MiB by default): one slow reader must not make the edge hold every event for it without bound.
   */
  maxUnsentBytes: number;
  /**
   * Bytes all of an instance's sockets together may leave unsent (WS_MAX_UNSENT_TOTAL_BYTES, 256 MiB
   * by default): maxUnsentBytes times thousands of sockets is more memory than an instance has. Past
   * it the sockets with the most unsent are closed with 1013, largest first.
   */
  maxUnsentTotalBytes: number;
  /** How often the instance's unsent bytes are added up against maxUnsentTotalBytes: 1 s unless a test shortens it. */
  unsentSweepMs?: number;
}

/** The dashboard: where it is served and how sign-in and sessions are limited. */
export interface DashboardSettings {
  path: string;
  /** A session ends after this long without a request (DASHBOARD_SESSION_IDLE_HOURS, default 12). */
  sessionIdleMs: number;
  /** and after this long whatever the activity (DASHBOARD_SESSION_MAX_DAYS, default 7). */
  sessionMaxMs: number;
  /** Sign-in attempts per client address per 15 minutes (DASHBOARD_SIGNIN_PER_ADDRESS, default 20). */
  signInPerAddress: number;
  /** Failed sign-ins per email per 15 minutes (DASHBOARD_SIGNIN_FAILURES_PER_EMAIL, default 5). */
  signInFailuresPerEmail: number;
}

export const DEFAULT_DASHBOARD_SETTINGS: DashboardSettings = {
  path: '/dashboard',
  sessionIdleMs: 12 * 3600_000,
  sessionMaxMs: 7 * 86400_000,
  signInPerAddress: 20,
  signInFailuresPerEmail: 5,
};


/**
 * How long the edge waits for a request to arrive, as a front proxy bounds it (nginx's
 * client_header_timeout and client_body_timeout, Apache's mod_reqtimeout MinRate). A request past
 * a bound is answered 408 while no response has begun, and its connection is closed.
 */
export interface RequestBounds {
  /** The headers, from the first byte (EDGE_HEADERS_TIMEOUT_MS, 60 s). */
  headersTimeoutMs: number;
  /**
   * The whole request, headers and body (EDGE_REQUEST_TIMEOUT_MS, 10 min: a 25 MiB document
   * arrives in that time at 45 kB/s). Only its arrival: an answer may take longer (streams, exports).
   */
  requestTimeoutMs: number;
  /**
   * The body is measured over windows of this length (EDGE_BODY_TIMEOUT_MS, 30 s): each must bring
   * bodyMinBytesPerSecond on average, so nothing at all for that long ends the request too.
   */
  bodyTimeoutMs: number;
  /** The slowest body the edge waits for (EDGE_BODY_MIN_BYTES_PER_SEC, 1024). Windows the edge itself held back (a slow upstream) do not count. */
  bodyMinBytesPerSecond: number;
}

export const DEFAULT_REQUEST_BOUNDS: RequestBounds = {
  headersTimeoutMs: 60_000,
  requestTimeoutMs: 600_000,
  bodyTimeoutMs: 30_000,
  bodyMinBytesPerSecond: 1024,
};

/** The export's bounds, which the traceroute subgraph owns: the edge gets them from the platform's configuration. */
export interface TraceExportLimits {
  maxHours: number;
  defaultHours: number;
  defaultLimit: number;
  maxLimit: number;
}

export interface EdgeOptions {
  supergraphSdl: string;
  /** Where each subgraph's /graphql answers, by subgraph name. */
  subgraphUrls: Record<string, string>;
  internalSecret: string;
  identityOrm: MikroORM;
  logger: Logger;
  introspection: boolean;
  restBases: RestBases;
  rateLimits: RateLimits;
  /** Shared rate-limit counters; in-process counting when unset. */
  redisUrl?: string;
  /** Counts nothing and sends no X-RateLimit headers: for benchmarks that measure the limiter. */
  limitsOff?: boolean;
  subscriptionLimits: SubscriptionLimits;
  /**
   * The inference subgraph's HTTP routes when it runs in this process: the inference mounts call
   * them directly; without them the mounts relay to the subgraph's URL.
   */
  localInference?: express.RequestHandler;
  /** The document upload cap (DOCUMENT_MAX_UPLOAD_BYTES): the platform's configuration, so the edge holds no subgraph default. */
  documents: { maxUploadBytes: number };
  /** The traceroute export's bounds, for its OpenAPI document (the subgraph owns them; the platform passes them on). */
  tracerouteExport: TraceExportLimits;
  /** How long a looked-up key is reused (KEY_CACHE_SECONDS); 0 reads the key store on every request. Default 30. */
  keyCacheSeconds?: number;
  /** Whether identical in-flight subgraph queries share one fetch (SUBGRAPH_QUERY_DEDUPLICATION); default true. */
  subgraphQueryDeduplication?: boolean;
  /** Where the dashboard is served (DASHBOARD_PATH); default /dashboard. */
  dashboardPath?: string;
  /** The dashboard's session lifetimes and sign-in limits (its API is served under `<dashboardPath>/api`). */
  dashboard?: Omit<DashboardSettings, 'path'>;
  /** The key cap the dashboard shows (MAX_ACTIVE_KEYS_PER_ACCOUNT). */
  maxActiveKeysPerAccount?: number;
  /** How deeply request JSON may nest on every interface (JSON_MAX_DEPTH); default 64. */
  jsonMaxDepth?: number;
  /** How long a request may take to arrive, and how slow its body may be (EDGE_*_TIMEOUT_MS, EDGE_BODY_MIN_BYTES_PER_SEC). */
  requestBounds?: RequestBounds;
  /** Which proxies' X-Forwarded-For and X-Forwarded-Proto are believed (TRUST_PROXY); none by default. */
  trustProxy?: TrustProxy;
  /** The origins whose web pages may call the published interfaces (CORS_ORIGINS); none by default. */
  crossOrigins?: CrossOrigins;
}

/** Who may call the published interfaces from a web page on another origin: any (`*`) or these origins. */
export type CrossOrigins = '*' | string[];

/**
 * Express's `trust proxy` setting, as TRUST_PROXY gives it: false (the peer is the client), true
 * (every hop is believed), a hop count, or the proxies' addresses and ranges (`loopback`,
 * `10.0.0.0/8`, ...).
 */
export type TrustProxy = boolean | number | string[];
