/**
 * Readiness signals for subscription tests, in place of fixed sleeps. A sleep long enough on a
 * loaded machine is slow everywhere else, and one short enough is a flake; worse, a sleep before
 * "nothing more arrived" passes whenever the unwanted event is merely late. Instead:
 *
 * - "the subscription is open": publish probes through the real path until one arrives on the
 *   subscription (proof that it is live end to end, which no protocol acknowledgement gives:
 *   graphql-ws acknowledges the connection, not each subscription, and the gateway opens its own
 *   upstream subscription after that);
 * - "nothing more arrives": publish a marker after whatever must not arrive and wait for the
 *   marker. Events of one subscription come in publication order, so once the marker is there,
 *   anything published before it has either come before it or will never come.
 *
 * Deadlines below only bound how long a failing test takes; no assertion depends on them.
 */

/** Waits until `ready()` holds, checking every few milliseconds; throws after `timeoutMs`. */
export async function until(ready: () => boolean, what = 'the condition', timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!ready()) {
    if (Date.now() > deadline) throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Whether `ready()` comes to hold within `windowMs`, without failing when it does not. */
async function within(ready: () => boolean, windowMs: number): Promise<boolean> {
  const end = Date.now() + windowMs;
  while (!ready()) {
    if (Date.now() > end) return false;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return true;
}

/**
 * Sends probes until `arrived()` holds: one probe, then a growing window for it to come through,
 * then another (a probe published before the subscription was listening is lost, not late).
 * Returns how many probes were sent.
 */
export async function probeUntil(arrived: () => boolean, sendProbe: (attempt: number) => Promise<unknown>, what = 'a probe to arrive', timeoutMs = 15_000): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  let windowMs = 25;
  for (let attempt = 0; ; attempt++) {
    await sendProbe(attempt);
    if (await within(arrived, windowMs)) return attempt + 1;
    if (Date.now() > deadline) throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}`);
    windowMs = Math.min(windowMs * 2, 1_000);
  }
}

/**
 * Proves a subscription live with labelled probes (e.g. chat messages whose text is the label)
 * and returns the index in `received` where the events after the probes begin. When an earlier
 * probe came through before the last one sent, the later ones may still be on their way: a final
 * probe is sent and awaited, so that no probe can arrive after the returned index.
 */
export async function openedWithProbes<T>(
  received: readonly T[],
  send: (label: string) => Promise<unknown>,
  labelOf: (event: T) => string | null | undefined,
  prefix = 'probe',
): Promise<number> {
  const labels = new Set<string>();
  const isProbe = (event: T) => labels.has(labelOf(event) ?? '');
  const sent = await probeUntil(
    () => received.some(isProbe),
    (attempt) => {
      labels.add(`${prefix}-${attempt}`);
      return send(`${prefix}-${attempt}`);
    },
    `a ${prefix} message to come through the subscription`,
  );
  const last = `${prefix}-${sent - 1}`;
  if (!received.some((event) => labelOf(event) === last)) {
    const final = `${prefix}-ready`;
    labels.add(final);
    await send(final);
    await until(() => received.some((event) => labelOf(event) === final), `the ${final} message`);
  }
  const unexpected = received.filter((event) => !isProbe(event));
  if (unexpected.length > 0) throw new Error(`Events other than probes arrived before the test began: ${JSON.stringify(unexpected)}`);
  return received.length;
}

/**
 * Sends a marker after events that must not arrive, waits for it, and returns what arrived from
 * `from` up to (not including) the marker: all that will ever arrive of what was published before.
 */
export async function receivedBeforeMarker<T>(
  received: readonly T[],
  send: (label: string) => Promise<unknown>,
  labelOf: (event: T) => string | null | undefined,
  { from = 0, label = 'marker' }: { from?: number; label?: string } = {},
): Promise<T[]> {
  await send(label);
  const at = () => received.findIndex((event, index) => index >= from && labelOf(event) === label);
  await until(() => at() >= 0, `the ${label} message`);
  return received.slice(from, at());
}
