import { createClient, type Client } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { loadConfig } from '../../platform/config.js';
import { startTestPlatform, testConfig, type TestPlatform } from '../support/platform-harness.js';

const RECHECK_MS = 200;
let platform: TestPlatform;
const clients: Client[] = [];

beforeAll(async () => {
  platform = await startTestPlatform({ subscriptions: { ...testConfig().subscriptions, keyRecheckMs: RECHECK_MS } });
});
afterAll(async () => {
  for (const client of clients) await client.dispose();
  await platform?.close();
});

interface Closed {
  code: number;
  reason: string;
}

function connect(on: TestPlatform, key: string) {
  const state: { closed?: Closed; connected: boolean } = { connected: false };
  const client = createClient({
    url: on.graphqlUrl.replace(/^http/, 'ws'),
    webSocketImpl: WebSocket,
    connectionParams: { authorization: `Bearer ${key}` },
    retryAttempts: 0,
    on: {
      connected: () => (state.connected = true),
      closed: (event) => (state.closed = { code: (event as Closed).code, reason: (event as Closed).reason }),
    },
  });
  clients.push(client);
  return { client, state };
}

async function until(predicate: () => boolean, timeoutMs = 5000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A text key subscribed to provider status over its own socket; resolves once the socket is up. */
async function subscribedTextKey(account: string, expiresAt?: Date) {
  const issued = await platform.identity().createKey({ account, kind: 'text', expiresAt });
  const { client, state } = connect(platform, issued.secret);
  const ended: { error?: unknown; complete?: boolean } = {};
  client.subscribe(
    { query: 'subscription { providerStatusChanged { id } }' },
    { next: () => {}, error: (error) => (ended.error = error), complete: () => (ended.complete = true) },
  );
  await until(() => state.connected);
  return { id: issued.id, state, ended };
}

describe('open websockets follow their key', () => {
  it('re-checks every 30 s by default, and never less often than every 60 s', () => {
    const env = { INTERNAL_SECRET: 'x'.repeat(32), DATA_DIR: '/tmp/platform-test-unused' };
    expect(loadConfig(env).subscriptions.keyRecheckMs).toBe(30_000);
    expect(loadConfig({ ...env, WS_KEY_RECHECK_MS: '60000' }).subscriptions.keyRecheckMs).toBe(60_000);
    expect(() => loadConfig({ ...env, WS_KEY_RECHECK_MS: '60001' })).toThrow(/WS_KEY_RECHECK_MS must be at most 60000/);
  });

  it('closes a subscribed socket with 4403 within the re-check interval once its key is disabled', async () => {
    const { id, state, ended } = await subscribedTextKey('ws-disabled');
    await new Promise((r) => setTimeout(r, RECHECK_MS * 2));
    expect(state.closed).toBeUndefined();
    const disabledAt = Date.now();
    await platform.identity().disableKey(id);
    await until(() => state.closed !== undefined, RECHECK_MS * 5);
    expect(Date.now() - disabledAt).toBeLessThan(RECHECK_MS * 5);
    expect(state.closed).toEqual({ code: 4403, reason: 'Forbidden: key_disabled' });
    expect(ended.error ?? ended.complete).toBeTruthy();
  });

  it('closes it with 4403 once the key is expired from the command line', async () => {
    const { id, state } = await subscribedTextKey('ws-expired');
    await platform.identity().expireKey(id);
    await until(() => state.closed !== undefined, RECHECK_MS * 5);
    expect(state.closed).toEqual({ code: 4403, reason: 'Forbidden: key_expired' });
  });

  it('closes it with 4403 when the key reaches its own expiry date', async () => {
    const { state } = await subscribedTextKey('ws-expiring', new Date(Date.now() + 1000));
    await until(() => state.closed !== undefined, 1000 + RECHECK_MS * 5);
    expect(state.closed).toEqual({ code: 4403, reason: 'Forbidden: key_expired' });
  });

  it('keeps a socket whose key stays good open', async () => {
    const { state } = await subscribedTextKey('ws-good');
    await new Promise((r) => setTimeout(r, RECHECK_MS * 4));
    expect(state.closed).toBeUndefined();
  });
});

describe('failed socket authentications', () => {
  it('count in the client address window shared with HTTP: either side can use it up', async () => {
    const own = await startTestPlatform({ rateLimits: { ...testConfig().rateLimits, anonymousPerMinute: 3 } });
    try {
      const attempt = async (key: string) => {
        const { client, state } = connect(own, key);
        client.subscribe({ query: '{ providers { id } }' }, { next: () => {}, error: () => {}, complete: () => {} });
        await until(() => state.closed !== undefined);
        return state.closed!.code;
      };
      expect(await attempt('tk_guess1')).toBe(4401);
      expect(await attempt('tk_guess2')).toBe(4401);
      expect((await own.request('/graphql', { method: 'POST', key: 'tk_guess3', json: { query: '{ providers { id } }' } })).status).toBe(401);
      // The address has used its three: the socket is refused as too many, and HTTP with 429.
      expect(await attempt('tk_guess4')).toBe(4429);
      expect((await own.request('/graphql', { method: 'POST', key: 'tk_guess5', json: { query: '{ providers { id } }' } })).status).toBe(429);
      // A good key is counted as itself, not by address, over the socket as over HTTP.
      const { client, state } = connect(own, await own.issueKey('ws-good-after', 'text'));
      const answer = await new Promise((resolve, reject) =>
        client.subscribe({ query: '{ provider(id: "provider_a") { id } }' }, { next: resolve, error: reject, complete: () => {} }),
      );
      expect(answer).toEqual({ data: { provider: { id: 'provider_a' } } });
      expect(state.closed).toBeUndefined();
    } finally {
      await own.close();
    }
  });
});
