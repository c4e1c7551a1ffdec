import { loadConfig, type PlatformConfig } from '../../platform/config.js';
import type { KeyKind } from '../../core/principal.js';
import type { DestinationStream } from 'pino';
import { createLogger } from '../../core/logger.js';
import { openIdentityStore } from '../../identity/index.js';
import { IdentityService } from '../../identity/identity.service.js';
import { AccountUser, type UserRole } from '../../identity/account-user.entity.js';
import { AccountUserService } from '../../identity/account-user.service.js';
import { startPlatform, type RunningPlatform } from '../../platform/platform.js';
import { createTestDatabase } from './database.js';
import { TEST_SECRET } from './subgraph-harness.js';
import { ocrOnlyInferenceConfig } from './inference-config.js';

export interface TestPlatform extends RunningPlatform {
  databaseUrl: string;
  /** Issues a key straight in the key store, as the CLI would; returns its secret. */
  issueKey(account: string, kind?: KeyKind, limits?: { hourlyLimit?: number; dailyLimit?: number }): Promise<string>;
  /** A dashboard user straight in the identity store (as `users create-owner` would, then its role); returns its id. */
  createDashboardUser(input: { account: string; email: string; password: string; name?: string; role?: UserRole; platformAdmin?: boolean }): Promise<string>;
  /** The key store, for disabling, expiring and listing keys in tests. */
  identity(): IdentityService;
  /** fetch() against the gateway's public port, path relative to it (e.g. /api/v1/members). */
  request(path: string, init?: RequestInit & { key?: string; json?: unknown }): Promise<Response>;
  close(): Promise<void>;
}

/** The platform's configuration for tests: free ports, the test secret, and `overrides`. */
export function testConfig(overrides: Partial<PlatformConfig> = {}): PlatformConfig {
  return {
    ...loadConfig({ NODE_ENV: 'test', DATA_DIR: '/tmp/platform-test-unused', INTERNAL_SECRET: TEST_SECRET }),
    port: 0,
    host: '127.0.0.1',
    subgraphPorts: { membership: 0, marketplace: 0, inference: 0, traceroute: 0 },
    inference: ocrOnlyInferenceConfig(),
    ...overrides,
  };
}

/** The whole platform on free ports over a fresh database, as a client sees it. */
export async function startTestPlatform(
  overrides: Partial<PlatformConfig> = {},
  log: { level?: string; destination?: DestinationStream } = {},
): Promise<TestPlatform> {
  const db = await createTestDatabase();
  const config = testConfig(overrides);
  const logger = createLogger(log.level ?? process.env.TEST_LOG_LEVEL ?? 'silent', 'platform', log.destination);
  const platform = await startPlatform(config, db.url, logger);
  const identityOrm = await openIdentityStore(db.url);
  return {
    ...platform,
    databaseUrl: db.url,
    issueKey: async (account, kind = 'live', limits = {}) =>
      (await new IdentityService(identityOrm.em.fork()).createKey({ account, kind, ...limits })).secret,
    identity: () => new IdentityService(identityOrm.em.fork()),
    createDashboardUser: async ({ role = 'owner', ...input }) => {
      const em = identityOrm.em.fork();
      const { user } = await new AccountUserService(em).createOwner(input);
      if (role !== 'owner') await em.nativeUpdate(AccountUser, { id: user.id }, { role });
      return user.id;
    },
    request: (path, init = {}) => {
      const { key, json, headers, ...rest } = init;
      return fetch(platform.baseUrl + path, {
        ...rest,
        headers: {
          ...(key ? { authorization: `Bearer ${key}` } : {}),
          ...(json !== undefined ? { 'content-type': 'application/json' } : {}),
          ...(headers as Record<string, string> | undefined),
        },
        body: json !== undefined ? JSON.stringify(json) : rest.body,
      });
    },
    close: async () => {
      await platform.stop();
      await identityOrm.close(true);
      await db.drop();
    },
  };
}
