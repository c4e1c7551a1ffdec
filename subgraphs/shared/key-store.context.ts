import type { KeyStore } from '../../core/key-store.js';
import type { SubgraphContext } from './context.js';
import type { SubgraphOptions } from './subgraph.js';

/**
 * The context of a subgraph that also manages API keys (membership: Settings, API Keys;
 * traceroute: its admin area). The keys are the edge's (schema `identity`): requests reach them
 * through the edge's key store, in process or over its internal endpoint, never by SQL.
 */
export interface KeyStoreContext extends SubgraphContext {
  keyStore: KeyStore;
}

/** What a subgraph that manages keys needs besides the shared options: the edge's key store. */
export interface KeyStoreSubgraphOptions extends SubgraphOptions {
  keyStore: KeyStore;
}

/** Extends each request's context with the key store (stateless: one serves every request). */
export function withKeyStore(keyStore: KeyStore) {
  return (base: SubgraphContext): KeyStoreContext => ({ ...base, keyStore });
}
