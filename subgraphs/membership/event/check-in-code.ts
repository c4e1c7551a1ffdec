import { createHash, randomInt } from 'node:crypto';

// No 0/O, 1/I/L: the code is read aloud and typed at the door.
const ALPHABET = 'ABCDEFGHJKMNPQRSTUVWXYZ23456789';
const LENGTH = 8;

/** A fresh check-in code, e.g. `K7QX3MPA` (about 40 bits). */
export function newCheckInCode(): string {
  let code = '';
  for (let i = 0; i < LENGTH; i++) code += ALPHABET[randomInt(ALPHABET.length)];
  return code;
}

/** The stored form of a code: case, spaces and dashes do not matter when it is typed in. */
export function hashCheckInCode(code: string): string {
  return createHash('sha256').update(code.replace(/[\s-]/g, '').toUpperCase()).digest('hex');
}
