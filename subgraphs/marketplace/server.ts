import { runSubgraphApart } from '../../platform/subgraph-apart.js';

/** The marketplace subgraph alone, on its internal port (MARKETPLACE_PORT). */
await runSubgraphApart('marketplace');
