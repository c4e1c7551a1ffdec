import { afterAll, beforeAll, expect, it } from 'vitest';
import { CLOSE_TOO_SLOW } from '../../edge/interfaces/graphql/subscriptions/websocket-server.js';
import { chatChannel, PASSED_THROUGH, RELAYED, slowSubscriber, startSlowReaderPlatform, type SlowReaderPlatform } from '../support/slow-subscriber.js';
import { until } from '../support/subscription-probe.js';

/**
 * A subscriber that stops reading its socket: the edge writes each event to it as it comes, so
 * without a bound it would keep every later event for that one client. Past maxUnsentBytes the
 * socket is closed with 1013 (try again later) and nothing more is written to it; the other
 * subscribers of the channel go on receiving.
 */
const MAX_UNSENT = 64 * 1024;
let setup: SlowReaderPlatform;

beforeAll(async () => {
  setup = await startSlowReaderPlatform({ maxUnsentBytes: MAX_UNSENT }, 'slow-readers');
});
afterAll(async () => {
  await setup?.platform.close();
});

const subscriber = (member: string, channel: string, subscriptions = 1, query = PASSED_THROUGH) =>
  slowSubscriber(setup.platform.graphqlUrl, setup.key, member, channel, subscriptions, query);

it.each([
  ['passed through', PASSED_THROUGH, /^Too slow: \d+ bytes unsent$/],
  ['relayed', RELAYED, /^Too slow: \d+ events waiting$/],
] as const)('closes the socket of a subscriber that stops reading (%s) with 1013, and the others still get every message', async (label, query, reason) => {
  const { gql, warnings } = setup;
  warnings.length = 0;
  const member = async (name: string) => (await gql<{ createMember: { id: string } }>(`mutation { createMember(name: "${name}-${label}", email: "${name}-${label.replace(' ', '-')}@example.org") { id } }`)).createMember.id;
  const [sender, slow, steady] = [await member('sender'), await member('slow'), await member('steady')];
  const { id: channel, send } = await chatChannel(gql, sender, [slow, steady], `slow-readers-${label.replace(' ', '-')}`);
  // The lagging client subscribes 50 times to the channel: each message is 50 frames to it, so a
  // few dozen messages outgrow what the kernel's loopback buffers take (a few MiB).
  const [lagging, reading] = [await subscriber(slow, channel, 50, query), await subscriber(steady, channel)];
  // Every subscription is up once a message reaches all of them.
  const allUp = () => reading.texts.length > 0 && lagging.texts.some((t) => lagging.texts.filter((u) => u === t).length === 50);
  for (let i = 0; !allUp(); i++) {
    if (i > 100) throw new Error('the subscriptions did not start');
    await send(`warm-up ${i}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  lagging.stopReading();
  // Large messages until the edge has more than MAX_UNSENT waiting for the lagging socket beyond
  // what the kernel's buffers took: it then closes that socket.
  const text = 'x'.repeat(3900);
  const closedSlow = () => warnings.some((line) => line.msg === 'closing a websocket whose client reads too slowly');
  let sent = 0;
  while (!closedSlow()) {
    expect(sent, 'the edge closed the lagging socket before 500 messages (100 MB for it)').toBeLessThan(500);
    await Promise.all(Array.from({ length: 10 }, (_, j) => send(`${text} ${sent + j}`)));
    sent += 10;
  }
  // The steady subscriber gets every message: one client's lag is not the others'.
  const big = (texts: string[]) => texts.filter((t) => t.startsWith('x')).length;
  await until(() => big(reading.texts) === sent, 'every message at the steady subscriber');
  expect(reading.state.closed).toBeUndefined();
  // More messages: nothing more is written to the closing socket.
  for (let i = 0; i < 10; i++) await send(`after ${i}`);
  await until(() => reading.texts.includes('after 9'), 'the later messages at the steady subscriber');
  // Reading again, the lagging client gets what was written before the close, then the close itself.
  lagging.readAgain();
  await until(() => lagging.state.closed !== undefined, 'the close frame at the lagging client', 20_000);
  expect(lagging.state.closed).toMatchObject({ code: CLOSE_TOO_SLOW, reason: expect.stringMatching(reason) });
  expect(big(lagging.texts)).toBeLessThan(sent * 50);
  expect(lagging.texts.some((t) => t.startsWith('after'))).toBe(false);
  reading.socket.close();
}, 120_000);
