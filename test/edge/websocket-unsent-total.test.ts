import { afterAll, beforeAll, expect, it } from 'vitest';
import { CLOSE_TOO_SLOW } from '../../edge/interfaces/graphql/subscriptions/websocket-server.js';
import { chatChannel, slowSubscriber, startSlowReaderPlatform, type SlowReaderPlatform } from '../support/slow-subscriber.js';
import { until } from '../support/subscription-probe.js';

/**
 * The instance's bound on unsent bytes over all its sockets (WS_MAX_UNSENT_TOTAL_BYTES). Each
 * socket here may leave far more unsent than the whole instance may, so only the total can close
 * one: when it is passed, the socket with the most unsent is closed with 1013, and a socket that
 * lags less, and the ones that read, keep their subscriptions.
 */
const TOTAL = 1024 * 1024;
let setup: SlowReaderPlatform;

beforeAll(async () => {
  setup = await startSlowReaderPlatform({ maxUnsentBytes: 256 * 1024 * 1024, maxUnsentTotalBytes: TOTAL, unsentSweepMs: 50 }, 'unsent-total');
});
afterAll(async () => {
  await setup?.platform.close();
});

it('closes the socket with the most unsent once the instance holds more than its total, and keeps the others', async () => {
  const { gql, warnings, platform, key } = setup;
  const member = async (name: string) => (await gql<{ createMember: { id: string } }>(`mutation { createMember(name: "${name}", email: "${name}@example.org") { id } }`)).createMember.id;
  const [sender, heavy, light, steady] = [await member('sender'), await member('heavy'), await member('light'), await member('steady')];
  const { id: channel, send } = await chatChannel(gql, sender, [heavy, light, steady], 'unsent-total');
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
