import { runSubgraphApart } from '../../platform/subgraph-apart.js';

/** The traceroute subgraph alone, on its internal port (TRACEROUTE_PORT). */
await runSubgraphApart('traceroute');
