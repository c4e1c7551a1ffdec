import { hash, verify } from '@node-rs/argon2';

/** Passwords shorter than this are refused (NIST SP 800-63B asks at least 8; we ask 10). */
export const MIN_PASSWORD_LENGTH = 10;
/** argon2 costs grow with the input; nobody types more. */
export const MAX_PASSWORD_LENGTH = 256;

/** argon2id with the library's defaults (19 MiB, 2 passes, 1 lane: OWASP's recommended minimum). */
export function hashPassword(password: string): Promise<string> {
  return hash(password);
}

let decoy: Promise<string> | undefined;

/**
 * Whether `password` matches `stored`. Without a stored hash (an unknown email) a decoy hash is
 * verified anyway, so the answer takes as long and says nothing about which emails exist.
 */
export async function verifyPassword(stored: string | undefined, password: string): Promise<boolean> {
  if (stored === undefined) {
    decoy ??= hash('decoy password never matched');
    await verify(await decoy, password).catch(() => false);
    return false;
  }
  return verify(stored, password).catch(() => false);
}
