import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import path from 'node:path';
import { DEFAULT_MAX_ACTIVE_KEYS_PER_ACCOUNT } from '../identity/identity.service.js';
import { connectableHost } from '../core/net.js';
import { DEFAULT_JSON_MAX_DEPTH } from '../core/json-depth.js';
import {
  DEFAULT_DASHBOARD_SETTINGS,
  DEFAULT_REQUEST_BOUNDS,
  type DashboardSettings,
  type RateLimits,
  type RequestBounds,
  type RestBases,
  type SubscriptionLimits,
  type TrustProxy,
  type CrossOrigins,
} from '../edge/edge-settings.js';
import type { InferenceConfig } from '../subgraphs/inference/config/inference-config.js';
import { loadInferenceConfig } from '../subgraphs/inference/config/load-inference-config.js';
import { DEFAULT_DOCUMENT_SETTINGS, type DocumentSettings } from '../subgraphs/membership/document/document-settings.js';
import { DEFAULT_CLASSIFICATION_SETTINGS, type ClassificationSettings } from '../subgraphs/membership/document-classification/classification-settings.js';
import { DEFAULT_MEMBERSHIP_SETTINGS, type MembershipSettings } from '../subgraphs/membership/member/membership-settings.js';
import { DEFAULT_OCDS_SETTINGS, type OcdsSettings } from '../subgraphs/marketplace/tender/ocds-settings.js';
import { DEFAULT_EXPORT_HOURS, DEFAULT_EXPORT_LIMIT, MAX_EXPORT_LIMIT, MAX_HOURS } from '../subgraphs/traceroute/trace/trace-limits.js';

/** The traceroute export's bounds, the subgraph's own, handed to the edge for its OpenAPI document. */
export const TRACE_EXPORT_LIMITS = { maxHours: MAX_HOURS, defaultHours: DEFAULT_EXPORT_HOURS, defaultLimit: DEFAULT_EXPORT_LIMIT, maxLimit: MAX_EXPORT_LIMIT };

// The edge's own settings are declared by the edge (edge/edge-settings.ts); this loader fills them.
export { DEFAULT_DASHBOARD_SETTINGS, DEFAULT_REQUEST_BOUNDS, type DashboardSettings, type RateLimits, type RequestBounds, type RestBases, type SubscriptionLimits, type TrustProxy };

/** The four subgraphs, in the order they are started and composed. */
export const SUBGRAPH_NAMES = ['membership', 'marketplace', 'inference', 'traceroute'] as const;
export type SubgraphName = (typeof SUBGRAPH_NAMES)[number];

const DEFAULT_SUBGRAPH_PORTS: Record<SubgraphName, number> = {
  membership: 4101,
  marketplace: 4102,
  inference: 4103,
  traceroute: 4104,
};

export interface PlatformConfig {
  /**
   * The inference providers, engines, interfaces and plans, when given here (tests, benches);
   * otherwise `inferenceConfigOf` reads INFERENCE_CONFIG when the inference subgraph starts, so
   * commands that never serve inference (the key tool) do not depend on that file.
   */
  inference?: InferenceConfig;
  port: number;
  host: string;
  dataDir: string;
  /** Set when the user brings a database; otherwise the embedded one is started. */
  databaseUrl: string | undefined;
  embeddedDatabasePort: number;
  logLevel: string;
  internalSecret: string;
  subgraphPorts: Record<SubgraphName, number>;
  /** The interface the subgraphs listen on (SUBGRAPH_HOST); loopback unless they run apart from the edge. */
  subgraphHost: string;
  /** Where the gateway finds each subgraph when they run apart (`<NAME>_URL`); defaults to SUBGRAPH_HOST and the subgraph's port. */
  subgraphUrls: Record<SubgraphName, string>;
  /** Where subgraphs running apart reach the edge's internal key store (EDGE_INTERNAL_URL); defaults to HOST and PORT. */
  edgeInternalUrl: string;
  restBases: RestBases;
  /**
   * Requests per minute: live and test per account and mode (all of its keys together), inference
   * and admin per key, and per client address without a valid key.
   */
  rateLimits: RateLimits;
  /** Shared rate-limit counters and subscription events across instances; in-process when unset. */
  redisUrl: string | undefined;
  /**
   * The edge's Prometheus endpoint, GET /metrics on a port of its own (METRICS_PORT; off when
   * unset) on METRICS_HOST (loopback by default): never on the public port. Subgraphs serve
   * /metrics on their internal ports.
   */
  metrics: { port: number | undefined; host: string };
  /**
   * Where spans go over OTLP/HTTP: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, or OTEL_EXPORTER_OTLP_ENDPOINT
   * and /v1/traces (OpenTelemetry's standard names); no tracing when neither is set.
   */
  tracing: { tracesUrl: string | undefined };
  /** Caps on graphql-ws subscriptions at the gateway and its keep-alive ping interval. */
  subscriptions: SubscriptionLimits;
  /** How long the edge waits for a request's headers, its whole arrival, and how slow its body may be (EDGE_*_TIMEOUT_MS, EDGE_BODY_MIN_BYTES_PER_SEC). */
  edgeRequests: RequestBounds;
  /** The proxies in front of the edge whose X-Forwarded-For and X-Forwarded-Proto are believed (TRUST_PROXY); none by default. */
  trustProxy: TrustProxy;
  /** The origins whose web pages may call the published interfaces (CORS_ORIGINS): `*`, a list, or none (undefined). */
  crossOrigins: CrossOrigins | undefined;
  /** Active (neither disabled nor expired) live and test keys one account may hold (MAX_ACTIVE_KEYS_PER_ACCOUNT). */
  maxActiveKeysPerAccount: number;
  /** How long the edge reuses a looked-up key (KEY_CACHE_SECONDS, default 30; 0 reads the key store every time). Changes reach it at once whatever this is. */
  keyCacheSeconds: number;
  /** Identical in-flight subgraph queries share one fetch (SUBGRAPH_QUERY_DEDUPLICATION, default true; false sends every one). */
  subgraphQueryDeduplication: boolean;
  introspection: boolean;
  /**
   * How deeply a request's JSON may nest arrays and objects on every interface (JSON_MAX_DEPTH,
   * default 64, at most 1000: far deeper and walking it would exhaust the stack).
   */
  jsonMaxDepth: number;
  /** Outbound chat webhooks: private targets allowed (WEBHOOK_ALLOW_PRIVATE_TARGETS=true, development and tests only) and the per-attempt timeout. */
  webhooks: { allowPrivateTargets: boolean; timeoutMs: number };
  /** Tenders as OCDS: the ocid prefix and the publisher's name (subgraphs/marketplace/tender/ocds-settings.ts). */
  ocds: OcdsSettings;
  /** The membership lifecycle: the renewal reminder lead time (subgraphs/membership/member/membership-settings.ts). */
  membership: MembershipSettings;
  /** Documents: upload cap, duplicates, trash retention and the processing workers (subgraphs/membership/document/document-settings.ts). */
  documents: DocumentSettings;
  /** Document classification: the classifier's threshold and the zero-shot provider, off unless DOCUMENT_ZERO_SHOT_URL and DOCUMENT_ZERO_SHOT_MODEL are set. */
  documentClassification: ClassificationSettings;
  /** The dashboard: where it is served (DASHBOARD_PATH, default /dashboard, its API under `<path>/api`) and how long sessions last. */
  dashboard: DashboardSettings;
}

function dashboardPathFromEnv(env: NodeJS.ProcessEnv): string {
  const raw = env.DASHBOARD_PATH;
  if (!raw) return DEFAULT_DASHBOARD_SETTINGS.path;
  if (!/^\/[A-Za-z0-9._~-]+(\/[A-Za-z0-9._~-]+)*$/.test(raw)) throw new Error(`DASHBOARD_PATH must be a path such as /dashboard (no trailing slash), got "${raw}"`);
  return raw;
}

function ocdsFromEnv(env: NodeJS.ProcessEnv): OcdsSettings {
  const ocidPrefix = env.OCDS_OCID_PREFIX || DEFAULT_OCDS_SETTINGS.ocidPrefix;
  if (!/^ocds-[a-z0-9]{6}$/.test(ocidPrefix)) throw new Error(`OCDS_OCID_PREFIX must be "ocds-" and six lower-case letters or digits (a prefix registered with the Open Contracting Partnership), got "${ocidPrefix}"`);
  return { ocidPrefix, publisherName: env.OCDS_PUBLISHER_NAME || DEFAULT_OCDS_SETTINGS.publisherName };
}

function intFromEnv(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0 || value > 65535) {
    throw new Error(`${name} must be a port number (0-65535), got "${raw}"`);
  }
  return value;
}

function countFromEnv(env: NodeJS.ProcessEnv, name: string, fallback: number, min = 1): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < min) throw new Error(`${name} must be a whole number of at least ${min}, got "${raw}"`);
  return value;
}

/** EDGE_INTERNAL_URL, checked; by default the edge's own HOST and PORT as a client on this machine reaches them. */
function edgeInternalUrlFromEnv(env: NodeJS.ProcessEnv, host: string, port: number): string {
  const raw = env.EDGE_INTERNAL_URL;
  if (!raw) return `http://${connectableHost(host)}:${port}`;
  let url: URL | undefined;
  try {
    url = new URL(raw);
  } catch {
    // Refused below, naming the variable.
  }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    throw new Error(`EDGE_INTERNAL_URL must be an http(s) URL such as http://10.0.0.4:4000, got "${raw}"`);
  }
  return raw;
}

function subgraphUrlFromEnv(env: NodeJS.ProcessEnv, name: SubgraphName, host: string, port: number): string {
  const variable = `${name.toUpperCase()}_URL`;
  const raw = env[variable];
  if (!raw) return `http://${connectableHost(host)}:${port}/graphql`;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error(`${variable} must be an http(s) URL such as http://10.0.0.5:4101/graphql, got "${raw}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`${variable} must be an http(s) URL, got "${raw}"`);
  return raw;
}

/** The edge's request bounds; the headers' must fit in the whole request's, as Node requires. */
function requestBoundsFromEnv(env: NodeJS.ProcessEnv): RequestBounds {
  const bounds: RequestBounds = {
    headersTimeoutMs: countFromEnv(env, 'EDGE_HEADERS_TIMEOUT_MS', DEFAULT_REQUEST_BOUNDS.headersTimeoutMs),
    requestTimeoutMs: countFromEnv(env, 'EDGE_REQUEST_TIMEOUT_MS', DEFAULT_REQUEST_BOUNDS.requestTimeoutMs),
    bodyTimeoutMs: countFromEnv(env, 'EDGE_BODY_TIMEOUT_MS', DEFAULT_REQUEST_BOUNDS.bodyTimeoutMs),
    bodyMinBytesPerSecond: countFromEnv(env, 'EDGE_BODY_MIN_BYTES_PER_SEC', DEFAULT_REQUEST_BOUNDS.bodyMinBytesPerSecond, 0),
  };
  if (bounds.headersTimeoutMs > bounds.requestTimeoutMs) {
    throw new Error(`EDGE_HEADERS_TIMEOUT_MS (${bounds.headersTimeoutMs}) must be at most EDGE_REQUEST_TIMEOUT_MS (${bounds.requestTimeoutMs}): the headers are part of the request`);
  }
  return bounds;
}

const TRUST_PROXY_NAMES = ['loopback', 'linklocal', 'uniquelocal'];

/**
 * TRUST_PROXY, as Express's `trust proxy`: unset or false (no proxy: the peer is the client), true
 * (every hop: only behind a proxy that overwrites X-Forwarded-For), a hop count, or a comma-separated
 * list of the proxies' addresses, ranges (10.0.0.0/8) and the names loopback, linklocal, uniquelocal.
 */
function trustProxyFromEnv(env: NodeJS.ProcessEnv): TrustProxy {
  const raw = env.TRUST_PROXY?.trim();
  if (!raw || raw === 'false') return false;
  if (raw === 'true') return true;
  if (/^\d+$/.test(raw)) return Number(raw);
  const entries = raw.split(',').map((entry) => entry.trim());
  for (const entry of entries) {
    if (TRUST_PROXY_NAMES.includes(entry)) continue;
    const [address, range, ...rest] = entry.split('/');
    const version = isIP(address);
    const rangeOk = range === undefined || (/^\d+$/.test(range) ? Number(range) <= (version === 6 ? 128 : 32) : version === 4 && isIP(range) === 4);
    if (!version || !rangeOk || rest.length) {
      throw new Error(
        `TRUST_PROXY must be true, false, a hop count, or addresses and ranges such as "loopback, 10.0.0.0/8" (names: ${TRUST_PROXY_NAMES.join(', ')}); "${entry}" is none of them`,
      );
    }
  }
  return entries;
}

/**
 * CORS_ORIGINS: unset (no cross-origin calls), `*` (any origin), or a comma-separated list of
 * origins (`https://app.example.com, http://localhost:3000`), each a scheme, host and port only.
 */
function crossOriginsFromEnv(raw: string | undefined): CrossOrigins | undefined {
  const value = raw?.trim();
  if (!value) return undefined;
  if (value === '*') return '*';
  return value.split(',').map((entry) => {
    const given = entry.trim();
    let url: URL | undefined;
    try {
      url = new URL(given);
    } catch {
      url = undefined;
    }
    // Browsers send the origin as scheme://host[:port] (no default port, no path): compared in that form.
    if (!url || !['http:', 'https:'].includes(url.protocol) || url.pathname !== '/' || url.search || url.hash || url.username || url.password) {
      throw new Error(`CORS_ORIGINS must be * or origins such as "https://app.example.com, http://localhost:3000" (scheme, host and port, no path); "${given}" is not one`);
    }
    return url.origin;
  });
}

function atMost(value: number, max: number, name: string): number {
  if (value > max) throw new Error(`${name} must be at most ${max}, got ${value}`);
  return value;
}

/**
 * The secret that signs principals between the edge and the subgraphs. Services started
 * apart must share INTERNAL_SECRET; a single `npm start` keeps one under DATA_DIR so that
 * a restart does not invalidate anything in flight.
 */
function internalSecret(env: NodeJS.ProcessEnv, dataDir: string): string {
  if (env.INTERNAL_SECRET) {
    if (env.INTERNAL_SECRET.length < 32) throw new Error('INTERNAL_SECRET must be at least 32 characters');
    return env.INTERNAL_SECRET;
  }
  const file = path.join(dataDir, 'internal-secret');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  mkdirSync(dataDir, { recursive: true });
  const secret = randomBytes(32).toString('base64url');
  writeFileSync(file, secret + '\n', { mode: 0o600 });
  return secret;
}

/** DOCUMENT_CLASSIFIER_THRESHOLD (0-1, default 0.6) and the zero-shot provider DOCUMENT_ZERO_SHOT_URL, _MODEL, _KEY, _TIMEOUT_MS. */
function documentClassificationFromEnv(env: NodeJS.ProcessEnv): ClassificationSettings {
  const rawThreshold = env.DOCUMENT_CLASSIFIER_THRESHOLD;
  const threshold = rawThreshold ? Number(rawThreshold) : DEFAULT_CLASSIFICATION_SETTINGS.classifierThreshold;
  if (!(threshold >= 0 && threshold <= 1)) throw new Error(`DOCUMENT_CLASSIFIER_THRESHOLD must be a number from 0 to 1, got "${rawThreshold}"`);
  const url = env.DOCUMENT_ZERO_SHOT_URL;
  if (!url) return { classifierThreshold: threshold, zeroShot: null };
  if (!/^https?:\/\//.test(url)) throw new Error(`DOCUMENT_ZERO_SHOT_URL must be an http(s) URL such as http://127.0.0.1:4000/inference/gateway/v1, got "${url}"`);
  if (!env.DOCUMENT_ZERO_SHOT_MODEL) throw new Error('DOCUMENT_ZERO_SHOT_MODEL must name the model when DOCUMENT_ZERO_SHOT_URL is set');
  return {
    classifierThreshold: threshold,
    zeroShot: { baseUrl: url, model: env.DOCUMENT_ZERO_SHOT_MODEL, apiKey: env.DOCUMENT_ZERO_SHOT_KEY || undefined, timeoutMs: countFromEnv(env, 'DOCUMENT_ZERO_SHOT_TIMEOUT_MS', 10_000) },
  };
}

/** Reads every setting of the platform from the environment, with defaults for a fresh machine. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): PlatformConfig {
  const dataDir = path.resolve(env.DATA_DIR || '.data');
  const inTest = env.NODE_ENV === 'test' || env.VITEST !== undefined;
  const subgraphPorts = {
    membership: intFromEnv(env, 'MEMBERSHIP_PORT', DEFAULT_SUBGRAPH_PORTS.membership),
    marketplace: intFromEnv(env, 'MARKETPLACE_PORT', DEFAULT_SUBGRAPH_PORTS.marketplace),
    inference: intFromEnv(env, 'INFERENCE_PORT', DEFAULT_SUBGRAPH_PORTS.inference),
    traceroute: intFromEnv(env, 'TRACEROUTE_PORT', DEFAULT_SUBGRAPH_PORTS.traceroute),
  };
  const subgraphHost = env.SUBGRAPH_HOST || '127.0.0.1';
  const subgraphUrls = Object.fromEntries(
    SUBGRAPH_NAMES.map((name) => [name, subgraphUrlFromEnv(env, name, subgraphHost, subgraphPorts[name])]),
  ) as Record<SubgraphName, string>;
  const port = intFromEnv(env, 'PORT', 4000);
  const host = env.HOST || '0.0.0.0';
  return {
    port,
    host,
    dataDir,
    databaseUrl: env.DATABASE_URL || undefined,
    embeddedDatabasePort: intFromEnv(env, 'EMBEDDED_PG_PORT', 5433),
    logLevel: env.LOG_LEVEL || (inTest ? 'silent' : 'info'),
    internalSecret: internalSecret(env, dataDir),
    subgraphPorts,
    subgraphHost,
    subgraphUrls,
    edgeInternalUrl: edgeInternalUrlFromEnv(env, host, port),
    restBases: {
      membership: env.MEMBERSHIP_REST_BASE || '/api/v1',
      traceroute: env.TRACEROUTE_REST_BASE || '/v1/public',
      inferenceText: env.INFERENCE_TEXT_BASE || '/inference/text',
      inferenceImage: env.INFERENCE_IMAGE_BASE || '/inference/image',
      inferenceProxy: env.INFERENCE_PROXY_BASE || '/inference/proxy',
      inferenceGateway: env.INFERENCE_GATEWAY_BASE || '/inference/gateway',
    },
    rateLimits: {
      livePerMinute: countFromEnv(env, 'RATE_LIMIT_LIVE_PER_MINUTE', 1000),
      testPerMinute: countFromEnv(env, 'RATE_LIMIT_TEST_PER_MINUTE', 10000),
      inferencePerMinute: countFromEnv(env, 'RATE_LIMIT_INFERENCE_PER_MINUTE', 600),
      anonymousPerMinute: countFromEnv(env, 'RATE_LIMIT_ANONYMOUS_PER_MINUTE', 1000),
    },
    redisUrl: env.REDIS_URL || undefined,
    metrics: { port: env.METRICS_PORT ? intFromEnv(env, 'METRICS_PORT', 0) : undefined, host: env.METRICS_HOST || '127.0.0.1' },
    tracing: { tracesUrl: env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || (env.OTEL_EXPORTER_OTLP_ENDPOINT ? `${env.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/$/, '')}/v1/traces` : undefined) },
    subscriptions: {
      perSocket: countFromEnv(env, 'SUBSCRIPTIONS_PER_SOCKET', 100),
      perInstance: countFromEnv(env, 'SUBSCRIPTIONS_PER_INSTANCE', 20000),
      keepAliveMs: countFromEnv(env, 'WS_KEEPALIVE_MS', 12000),
      keyRecheckMs: atMost(countFromEnv(env, 'WS_KEY_RECHECK_MS', 30000), 60000, 'WS_KEY_RECHECK_MS'),
      maxUnsentBytes: countFromEnv(env, 'WS_MAX_UNSENT_BYTES', 1048576),
      maxUnsentTotalBytes: countFromEnv(env, 'WS_MAX_UNSENT_TOTAL_BYTES', 268435456),
    },
    edgeRequests: requestBoundsFromEnv(env),
    trustProxy: trustProxyFromEnv(env),
    crossOrigins: crossOriginsFromEnv(env.CORS_ORIGINS),
    maxActiveKeysPerAccount: countFromEnv(env, 'MAX_ACTIVE_KEYS_PER_ACCOUNT', DEFAULT_MAX_ACTIVE_KEYS_PER_ACCOUNT),
    keyCacheSeconds: countFromEnv(env, 'KEY_CACHE_SECONDS', 30, 0),
    subgraphQueryDeduplication: env.SUBGRAPH_QUERY_DEDUPLICATION !== 'false',
    jsonMaxDepth: atMost(countFromEnv(env, 'JSON_MAX_DEPTH', DEFAULT_JSON_MAX_DEPTH), 1000, 'JSON_MAX_DEPTH'),
    webhooks: {
      allowPrivateTargets: env.WEBHOOK_ALLOW_PRIVATE_TARGETS === 'true',
      timeoutMs: countFromEnv(env, 'WEBHOOK_TIMEOUT_MS', 10000),
    },
    ocds: ocdsFromEnv(env),
    membership: {
      renewalReminderDays: atMost(countFromEnv(env, 'MEMBER_RENEWAL_REMINDER_DAYS', DEFAULT_MEMBERSHIP_SETTINGS.renewalReminderDays, 0), 366, 'MEMBER_RENEWAL_REMINDER_DAYS'),
    },
    documents: {
      maxUploadBytes: countFromEnv(env, 'DOCUMENT_MAX_UPLOAD_BYTES', DEFAULT_DOCUMENT_SETTINGS.maxUploadBytes),
      allowDuplicates: env.DOCUMENT_ALLOW_DUPLICATES === 'true',
      trashRetentionDays: countFromEnv(env, 'DOCUMENT_TRASH_RETENTION_DAYS', DEFAULT_DOCUMENT_SETTINGS.trashRetentionDays),
      workers: countFromEnv(env, 'DOCUMENT_WORKERS', DEFAULT_DOCUMENT_SETTINGS.workers),
      timeLimitMs: countFromEnv(env, 'DOCUMENT_TIME_LIMIT_MS', DEFAULT_DOCUMENT_SETTINGS.timeLimitMs),
      retries: countFromEnv(env, 'DOCUMENT_RETRIES', DEFAULT_DOCUMENT_SETTINGS.retries),
    },
    documentClassification: documentClassificationFromEnv(env),
    dashboard: {
      path: dashboardPathFromEnv(env),
      sessionIdleMs: countFromEnv(env, 'DASHBOARD_SESSION_IDLE_HOURS', 12) * 3600_000,
      sessionMaxMs: countFromEnv(env, 'DASHBOARD_SESSION_MAX_DAYS', 7) * 86400_000,
      signInPerAddress: countFromEnv(env, 'DASHBOARD_SIGNIN_PER_ADDRESS', DEFAULT_DASHBOARD_SETTINGS.signInPerAddress),
      signInFailuresPerEmail: countFromEnv(env, 'DASHBOARD_SIGNIN_FAILURES_PER_EMAIL', DEFAULT_DASHBOARD_SETTINGS.signInFailuresPerEmail),
    },
    introspection: env.GRAPHQL_INTROSPECTION ? env.GRAPHQL_INTROSPECTION === 'true' : env.NODE_ENV !== 'production',
  };
}

/** The inference configuration the platform runs with: the one given, or INFERENCE_CONFIG's (models under DATA_DIR by default). */
export function inferenceConfigOf(config: PlatformConfig, env: NodeJS.ProcessEnv = process.env): InferenceConfig {
  return config.inference ?? loadInferenceConfig({ ...env, DATA_DIR: config.dataDir });
}
