import type { PublishedInterface } from '../../published-interface.js';
import { healthHandler } from './health.js';

/** /health for operators and load balancers: the database and every subgraph. */
export const health: PublishedInterface = {
  name: 'health',
  mount(edge) {
    edge.app.get('/health', healthHandler(edge.identityOrm, edge.options.subgraphUrls));
  },
};
