import { runSubgraphApart } from '../subgraph-apart.js';

/** The membership subgraph alone, on SUBGRAPH_HOST:MEMBERSHIP_PORT (default 127.0.0.1:4101). */
await runSubgraphApart('membership');
