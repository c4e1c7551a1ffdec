import type { Request } from 'express';
import type { ApiKey } from '../../identity/api-key.entity.js';
import type { ApiError, ErrorFormat } from '../rest/api-error.js';
import type { KeyKind, Principal } from '../../core/principal.js';
import type { LimitWindow } from './rate-limiter.js';

/** Why a key was not accepted: none given, or given and not good enough. */
export type KeyRefusal = 'missing' | 'invalid_key' | 'key_disabled' | 'key_expired' | 'wrong_kind';

/**
 * One public interface's edge rules, as its specification states them: where the key is read
 * from, which kinds it accepts (per request: Service I splits image and text endpoints), how
 * each refusal and each limit breach is worded, and the body errors come in.
 */
export interface EdgeInterface {
  name: string;
  /** The presented secret, or undefined when the request carries none. */
  credential(req: Request): string | undefined;
  kinds(req: Request): readonly KeyKind[];
  /** How a refused key is answered (status, error name, message). */
  refusal(reason: KeyRefusal, req: Request): ApiError;
  /**
   * The windows a request is counted in, each naming whose count it is: the account and mode of
   * a membership key, any other key itself, the client address without a valid key.
   */
  windows(principal: Principal | undefined, key: ApiKey | undefined, address: string | undefined): LimitWindow[];
  /** The error a breach of `window` gives. */
  exceeded(window: LimitWindow): ApiError;
  format: ErrorFormat;
  /**
   * Interfaces without keys (the inference proxy and gateway): no credential is read or required,
   * and every request counts in the client address's window.
   */
  keyless?: boolean;
}
