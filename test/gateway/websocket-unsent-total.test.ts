import { afterAll, beforeAll, expect, it } from 'vitest';
import { CLOSE_TOO_SLOW } from '../../gateway/subscriptions/websocket-server.js';
import { startTestPlatform, testConfig, type TestPlatform } from '../support/platform-harness.js';
import { slowSubscriber } from '../support/slow-subscriber.js';
import { until } from '../support/subscription-probe.js';

/**
 * The instance's bound on unsent bytes over all its sockets (WS_MAX_UNSENT_TOTAL_BYTES). Each
 * socket here may leave far more unsent than the whole instance may, so only the total can close
 * one: when it is passed, the socket with the most unsent is closed with 1013, and a socket that
 * lags less, and the ones that read, keep their subscriptions.
 */
const TOTAL = 1024 * 1024;
let platform: TestPlatform;
let key: string;
/** The edge's warnings: a paused client does not read the close frame, so the edge's own line tells the test it closed. */
const warnings: { msg: string; unsent?: number; instanceUnsent?: number }[] = [];

beforeAll(async () => {
  platform = await startTestPlatform(
    { subscriptions: { ...testConfig().subscriptions, maxUnsentBytes: 256 * 1024 * 1024, maxUnsentTotalBytes: TOTAL, unsentSweepMs: 50 } },
    { level: 'warn', destination: { write: (line: string) => void warnings.push(JSON.parse(line)) } },
  );
  key = await platform.issueKey('unsent-total', 'live');
});
afterAll(async () => {
  await platform?.close();
});

async function gql<T>(query: string, variables: Record<string, unknown> = {}): Promise<T> {
  const response = await platform.request('/graphql', { method: 'POST', key, json: { query, variables } });
  const body = (await response.json()) as { data?: T; errors?: unknown };
  expect(body.errors).toBeUndefined();
  return body.data!;
}

it('closes the socket with the most unsent once the instance holds more than its total, and keeps the others', async () => {
  const member = async (name: string) => (await gql<{ createMember: { id: string } }>(`mutation { createMember(name: "${name}", email: "${name}@example.org") { id } }`)).createMember.id;
  const [sender, heavy, light, steady] = [await member('sender'), await member('heavy'), await member('light'), await member('steady')];
  const channel = (
    await gql<{ createChatChannel: { id: string } }>('mutation($a: ID!, $m: [ID!], $n: String!) { createChatChannel(asMember: $a, name: $n, memberIds: $m) { id } }', { a: sender, m: [heavy, light, steady], n: 'unsent-total' })
  ).createChatChannel.id;
  const send = (text: string) => gql('mutation($a: ID!, $c: ID!, $t: String!) { sendChatMessage(asMember: $a, mode: CHANNEL, channelId: $c, text: $t) { id } }', { a: sender, c: channel, t: text });
  // Both laggards stop reading; the heavy one takes ten frames of every message for each one the light one takes.
  const lagging = await slowSubscriber(platform.graphqlUrl, key, heavy, channel, 50);
  const lighter = await slowSubscriber(platform.graphqlUrl, key, light, channel, 5);
  const reading = await slowSubscriber(platform.graphqlUrl, key, steady, channel);
  const copies = (texts: string[], text: string) => texts.filter((t) => t === text).length;
  for (let i = 0; !(copies(lagging.texts, `warm-up ${i - 1}`) === 50 && copies(lighter.texts, `warm-up ${i - 1}`) === 5 && reading.texts.includes(`warm-up ${i - 1}`)); i++) {
    if (i > 100) throw new Error('the subscriptions did not start');
    await send(`warm-up ${i}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  lagging.stopReading();
  lighter.stopReading();

  const text = 'x'.repeat(3900);
  const closing = () => warnings.filter((line) => line.msg === 'closing a websocket whose client reads too slowly');
  let sent = 0;
  while (closing().length === 0) {
    expect(sent, 'the instance closed a socket before 500 messages').toBeLessThan(500);
    await Promise.all(Array.from({ length: 5 }, (_, j) => send(`${text} ${sent + j}`)));
    sent += 5;
    // The sweep runs every 50 ms: give it its turn before more is sent.
    await new Promise((resolve) => setTimeout(resolve, 60));
  }
  // One socket closed, for the instance's total, not its own bound.
  expect(closing()).toHaveLength(1);
  expect(closing()[0].instanceUnsent).toBeGreaterThan(TOTAL);
  expect(closing()[0].unsent).toBeLessThan(256 * 1024 * 1024);

  const big = (texts: string[]) => texts.filter((t) => t.startsWith('x')).length;
  await until(() => big(reading.texts) === sent, 'every message at the reading subscriber');
  lagging.readAgain();
  lighter.readAgain();
  await until(() => lagging.state.closed !== undefined, 'the close frame at the heavy laggard', 20_000);
  expect(lagging.state.closed).toMatchObject({ code: CLOSE_TOO_SLOW, reason: expect.stringMatching(/^Too slow: \d+ bytes unsent, the most of the instance's sockets$/) });
  // The lighter laggard, reading again, gets everything and stays subscribed.
  await until(() => big(lighter.texts) === sent * 5, 'every message at the lighter laggard', 20_000);
  await send('after');
  await until(() => copies(lighter.texts, 'after') === 5 && reading.texts.includes('after'), 'a later message at the others');
  expect(lighter.state.closed).toBeUndefined();
  expect(reading.state.closed).toBeUndefined();
  expect(closing()).toHaveLength(1);
  for (const client of [lagging, lighter, reading]) client.socket.terminate();
}, 120_000);
