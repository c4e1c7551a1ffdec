import type { Principal } from '../../../core/principal.js';

/** Who is calling: a key's principal, or (keyless interfaces) the client's address. */
export interface Caller {
  principal?: Principal;
  address?: string;
}
