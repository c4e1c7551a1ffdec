/**
 * Where the edge keeps automatic persisted queries (the hash a client sends in place of a query it
 * registered once): Apollo's KeyValueCache, which every implementation here satisfies. Apollo's
 * default keeps them in the process, and a query registered on one edge worker or replica was
 * PERSISTED_QUERY_NOT_FOUND on the others.
 */
export interface PersistedQueryCache {
  get(key: string): Promise<string | undefined>;
  set(key: string, value: string, options?: { ttl?: number | null }): Promise<void>;
  delete(key: string): Promise<boolean | void>;
}

/** What an edge worker asks its cluster's primary, which keeps the workers' one store (cluster-persisted-queries.ts). */
export type PersistedQueryRequest =
  | { type: 'apq'; op: 'get'; id: number; key: string }
  | { type: 'apq'; op: 'set'; key: string; value: string; ttlSeconds: number | null }
  | { type: 'apq'; op: 'delete'; key: string };

/** The primary's answer to a `get`. */
export interface PersistedQueryReply {
  type: 'apq-reply';
  id: number;
  value: string | null;
}

export function isPersistedQueryRequest(message: unknown): message is PersistedQueryRequest {
  return typeof message === 'object' && message !== null && (message as PersistedQueryRequest).type === 'apq' && typeof (message as PersistedQueryRequest).key === 'string';
}

export function isPersistedQueryReply(message: unknown): message is PersistedQueryReply {
  return typeof message === 'object' && message !== null && (message as PersistedQueryReply).type === 'apq-reply' && typeof (message as PersistedQueryReply).id === 'number';
}
