import { runSubgraphApart } from '../../platform/subgraph-apart.js';

/** The membership subgraph alone, on its internal port (MEMBERSHIP_PORT). */
await runSubgraphApart('membership');
