import type { EntityManager } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import type { Principal } from '../../core/principal.js';
import type { PlatformPubSub } from './pubsub.js';

/** What every resolver of every subgraph receives: who is asking, and a request-scoped EntityManager. */
export interface SubgraphContext {
  principal: Principal;
  em: EntityManager;
  /** Per-request memo for DataLoaders, keyed by loader name, so batching spans one request only. */
  loaders: Map<string, unknown>;
  /** Where changes are published (after their commit) and subscriptions listen. */
  pubsub: PlatformPubSub;
  /** The edge's request id (X-Request-Id over HTTP, the subscribe payload's extensions over graphql-ws): internal errors are logged and answered with it. */
  requestId?: string;
  /** The request's logger (its lines carry the request) when served over HTTP. */
  log?: Logger;
}

/** Returns the request's loader named `name`, creating it on first use. */
export function loaderFor<T>(ctx: SubgraphContext, name: string, create: () => T): T {
  let loader = ctx.loaders.get(name) as T | undefined;
  if (!loader) {
    loader = create();
    ctx.loaders.set(name, loader);
  }
  return loader;
}
