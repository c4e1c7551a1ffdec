import { withKeyStore, type KeyStoreContext, type KeyStoreSubgraphOptions } from '../shared/key-store.context.js';
import { createSubgraph, type Subgraph, type SubgraphParts } from '../shared/subgraph.js';
import { TracerouteKeyResolver } from './api-key/traceroute-key.resolver.js';
import { createTraceExportHandler } from './export/trace-export.handler.js';
import { tracerouteOrmOptions } from './mikro-orm.config.js';
import { traceReference } from './trace/trace.reference.js';
import { TraceResolver } from './trace/trace.resolver.js';

/** What defines the traceroute subgraph, also used to compose the supergraph without a database. */
export const tracerouteParts: SubgraphParts = {
  name: 'traceroute',
  orm: tracerouteOrmOptions,
  resolvers: [TraceResolver, TracerouteKeyResolver],
  references: { Trace: traceReference as never },
  servesKinds: ['traceroute', 'admin'],
};

/** Builds the traceroute subgraph (public traceroute measurements, its key admin area) and migrates its schema. */
export async function createTracerouteSubgraph(options: KeyStoreSubgraphOptions): Promise<Subgraph<KeyStoreContext>> {
  const subgraph = await createSubgraph(tracerouteParts, options, withKeyStore(options.keyStore));
  // The export streams COPY from this subgraph's own schema; the edge relays it (GraphQL cannot stream).
  const traceExport = createTraceExportHandler({ basePath: '', databaseUrl: options.databaseUrl });
  return {
    ...subgraph,
    httpRoutes: traceExport,
    close: async () => {
      await traceExport.close();
      await subgraph.close();
    },
  };
}
