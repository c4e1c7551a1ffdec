import { membershipParts } from '../subgraphs/membership/index.js';
import { inferenceParts } from '../subgraphs/inference/index.js';
import { marketplaceParts } from '../subgraphs/marketplace/index.js';
import { tracerouteParts } from '../subgraphs/traceroute/index.js';
import type { SubgraphParts } from '../subgraphs/shared/subgraph.js';

/** Every subgraph of the graph, in composition order. */
export const SUBGRAPH_PARTS: SubgraphParts[] = [membershipParts, marketplaceParts, inferenceParts, tracerouteParts];
