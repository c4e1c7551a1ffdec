import { randomBytes } from 'node:crypto';

/** Any uuid, in any version: what an id argument must look like before it reaches a uuid column. */
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A UUIDv7 (RFC 9562) carrying `at` in its first 48 bits: ids sort by time, and name their monthly partition (traces, inference usage records). */
export function uuidV7(at: Date): string {
  const bytes = randomBytes(16);
  const ms = BigInt(at.getTime());
  for (let i = 0; i < 6; i++) bytes[i] = Number((ms >> BigInt(8 * (5 - i))) & 0xffn);
  bytes[6] = (bytes[6] & 0x0f) | 0x70;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The time a UUIDv7 carries, or null for any other uuid. */
export function timeOfUuidV7(id: string): Date | null {
  if (id[14] !== '7') return null;
  const ms = parseInt(id.slice(0, 8) + id.slice(9, 13), 16);
  return Number.isFinite(ms) ? new Date(ms) : null;
}
