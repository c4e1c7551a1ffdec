import type { Principal } from './principal.js';

/** What the gateway's Apollo server carries per request: the principal the edge authenticated. */
export interface EdgeContext {
  principal: Principal;
  requestId: string;
}
