import type { MikroORM } from '@mikro-orm/postgresql';
import { IdentityService, type IdentitySettings } from '../../identity/identity.service.js';
import type { SubgraphContext } from './context.js';
import type { SubgraphOptions } from './subgraph.js';

/**
 * The context of a subgraph that also manages API keys (membership: Settings, API Keys;
 * traceroute: its admin area): requests carry the edge's key store.
 */
export interface KeyStoreContext extends SubgraphContext {
  identity: IdentityService;
}

/** What a subgraph that manages keys needs besides the shared options: the edge's key store. */
export interface KeyStoreSubgraphOptions extends SubgraphOptions, IdentitySettings {
  identityOrm: MikroORM;
}

/** Extends each request's context with an IdentityService on its own EntityManager fork. */
export function withKeyStore(identityOrm: MikroORM, settings: IdentitySettings = {}) {
  return (base: SubgraphContext): KeyStoreContext => ({ ...base, identity: new IdentityService(identityOrm.em.fork(), settings) });
}
