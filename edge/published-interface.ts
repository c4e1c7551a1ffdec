import type http from 'node:http';
import type { ApolloServer } from '@apollo/server';
import type { MikroORM } from '@mikro-orm/postgresql';
import type express from 'express';
import type { GraphQLSchema } from 'graphql';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { EdgeContext } from '../core/edge-context.js';
import type { KeyCache } from '../identity/key-cache.js';
import type { KeyUseRecorder } from '../identity/key-use-recorder.js';
import type { EdgeInterface } from './access/edge-interface.js';
import type { RateLimiter } from './access/rate-limiter.js';
import type { FederatedGraph } from './federation/federated-graph.js';
import type { IdempotencyOwner } from './idempotency/idempotency-owner.js';
import type { SessionAuthenticator } from './access/session-auth.js';
import type { UsageRecorder } from './interfaces/dashboard/usage-recorder.js';
import type { DashboardSettings, EdgeOptions } from './edge-settings.js';
import type { ErrorFormat } from './rest/api-error.js';

/**
 * What every published interface mounts with: the app and server, the federated graph its
 * operations run on, and the edge's shared checks (keys, limits, sessions, idempotency owners).
 */
export interface EdgeParts {
  app: express.Express;
  httpServer: http.Server;
  options: EdgeOptions;
  graph: FederatedGraph;
  apollo: ApolloServer<EdgeContext>;
  apiSchema: GraphQLSchema;
  identityOrm: MikroORM;
  logger: Logger;
  limiter: RateLimiter;
  /** The shared Redis with REDIS_URL (limits, persisted queries), checked by /readyz. */
  redis?: Redis;
  keyCache: KeyCache;
  keyUse: KeyUseRecorder;
  sessions: SessionAuthenticator;
  usage: UsageRecorder;
  idempotencyOwner: IdempotencyOwner;
  dashboard: DashboardSettings;
  jsonMaxDepth: number;
  /** Authentication and limits by an interface's key rules; `publicPaths` need no key. */
  guard(rules: EdgeInterface, publicPaths?: string[], withSessions?: SessionAuthenticator): express.RequestHandler;
  /**
   * Serves `handlers` for every path under `base`, the prefix kept: Express's app.use(path) would
   * strip it, and the REST bridge routes on the full path.
   */
  mountAt(base: string, ...handlers: express.RequestHandler[]): void;
  /**
   * Express's app.use(path, ...handlers), and for a POST to exactly `path` the same handlers run
   * without Express's router (the hot path of /graphql).
   */
  mountPath(path: string, ...handlers: express.RequestHandler[]): void;
}

/** What a mounted interface leaves the edge to stop, and to count. */
export interface MountedInterface {
  stop?(): Promise<void>;
  /** Authenticated websockets open now (GraphQL over websockets). */
  openSockets?(): number;
}

/**
 * One interface the edge publishes (membership REST, traceroute REST, an inference mount, GraphQL,
 * the dashboard, the internal key store, health), with everything it needs in its own folder.
 */
export interface PublishedInterface {
  name: string;
  /**
   * The paths it owns and the error body failures there are answered in, when the edge answers
   * before the interface does (a slow request's 408, the key store down, a body parser's 400).
   */
  errorBodies?(options: EdgeOptions): [base: string, format: ErrorFormat][];
  mount(edge: EdgeParts): MountedInterface | void | Promise<MountedInterface | void>;
}
