import { runSubgraphApart } from '../subgraph-apart.js';

/** The inference subgraph alone, on SUBGRAPH_HOST:INFERENCE_PORT (default 127.0.0.1:4103). */
await runSubgraphApart('inference');
