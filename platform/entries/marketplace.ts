import { runSubgraphApart } from '../subgraph-apart.js';

/** The marketplace subgraph alone, on SUBGRAPH_HOST:MARKETPLACE_PORT (default 127.0.0.1:4102). */
await runSubgraphApart('marketplace');
