import type { IdentityService } from '../../platform/identity/identity.service.js';
import type { SubgraphContext } from '../shared/context.js';

/** The membership subgraph also serves Settings, API Keys, so its requests carry the key store. */
export interface MembershipContext extends SubgraphContext {
  identity: IdentityService;
}
