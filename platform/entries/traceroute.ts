import { runSubgraphApart } from '../subgraph-apart.js';

/** The traceroute subgraph alone, on SUBGRAPH_HOST:TRACEROUTE_PORT (default 127.0.0.1:4104). */
await runSubgraphApart('traceroute');
