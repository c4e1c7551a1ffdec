/**
 * The Idempotency-Key contract between the edge and the subgraphs. The edge validates the key
 * and forwards it with every subgraph fetch of the request; a subgraph stores the outcome of a
 * keyed mutation in the transaction of its writes (subgraphs/shared/idempotent-mutations.plugin.ts),
 * so whether a write committed is known where it committed.
 */
export const IDEMPOTENCY_KEY_HEADER = 'x-idempotency-key';

/** Set by a subgraph on an answer it replayed from a committed outcome instead of running. */
export const IDEMPOTENT_REPLAYED_HEADER = 'idempotent-replayed';

/** How long a key answers for its first request, at the edge and in the subgraphs alike. */
export const IDEMPOTENCY_RETENTION_MS = 24 * 60 * 60 * 1000;

/** A keyed request on its way through the edge: the key, and whether a subgraph replayed its answer. */
export interface IdempotentRun {
  key: string;
  replayed: boolean;
}
