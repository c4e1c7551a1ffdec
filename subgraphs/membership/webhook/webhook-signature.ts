import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

const PREFIX = 'whsec_';

/** A new signing secret: `whsec_` + base64 of 24 random bytes (Standard Webhooks). */
export function newWebhookSecret(): string {
  return PREFIX + randomBytes(24).toString('base64');
}

function key(secret: string): Buffer {
  return Buffer.from(secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret, 'base64');
}

/** The webhook-signature header: `v1,` + base64 HMAC-SHA256 of `id.timestamp.body`, keyed by the decoded secret. */
export function signWebhook(secret: string, id: string, timestamp: number, body: string): string {
  return 'v1,' + createHmac('sha256', key(secret)).update(`${id}.${timestamp}.${body}`).digest('base64');
}

/**
 * Checks a delivery as a receiver would: one of the space-separated `v1,` signatures matches
 * and the timestamp is within `toleranceSeconds` of now.
 */
export function verifyWebhook(
  secret: string,
  headers: { id: string; timestamp: string; signature: string },
  body: string,
  now = Date.now(),
  toleranceSeconds = 300,
): boolean {
  const timestamp = Number(headers.timestamp);
  if (!Number.isInteger(timestamp) || Math.abs(now / 1000 - timestamp) > toleranceSeconds) return false;
  const expected = Buffer.from(signWebhook(secret, headers.id, timestamp, body).slice(3), 'base64');
  return headers.signature.split(' ').some((candidate) => {
    const [version, value] = candidate.split(',');
    if (version !== 'v1' || !value) return false;
    const given = Buffer.from(value, 'base64');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}
