import { runSubgraphApart } from '../../platform/subgraph-apart.js';

/** The inference subgraph alone, on its internal port (INFERENCE_PORT). */
await runSubgraphApart('inference');
