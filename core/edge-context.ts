import type { IdempotentRun } from './idempotency.js';
import type { Principal } from './principal.js';

/** What the gateway's Apollo server carries per request: the principal the edge authenticated. */
export interface EdgeContext {
  principal: Principal;
  requestId: string;
  /** The request's Idempotency-Key, sent with each subgraph fetch; absent when it has none. */
  idempotency?: IdempotentRun;
}
