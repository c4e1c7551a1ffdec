import { createSubgraph, type Subgraph, type SubgraphOptions, type SubgraphParts } from '../shared/subgraph.js';
import { tracerouteOrmOptions } from './mikro-orm.config.js';
import { traceReference } from './trace/trace.reference.js';
import { TraceResolver } from './trace/trace.resolver.js';

/** What defines the traceroute subgraph, also used to compose the supergraph without a database. */
export const tracerouteParts: SubgraphParts = {
  name: 'traceroute',
  orm: tracerouteOrmOptions,
  resolvers: [TraceResolver],
  references: { Trace: traceReference },
};

/** Builds the traceroute subgraph (public traceroute measurements) and migrates its schema. */
export function createTracerouteSubgraph(options: SubgraphOptions): Promise<Subgraph> {
  return createSubgraph(tracerouteParts, options);
}
