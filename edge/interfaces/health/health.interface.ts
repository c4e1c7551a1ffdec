import type { PublishedInterface } from '../../published-interface.js';
import { livenessHandler, readinessHandler } from './health.js';

/** For operators and load balancers: /livez (alive), /readyz and /health (the database, subgraphs, Redis). */
export const health: PublishedInterface = {
  name: 'health',
  mount(edge) {
    const ready = readinessHandler(edge.identityOrm, edge.options.subgraphUrls, edge.redis);
    edge.app.get('/livez', livenessHandler);
    edge.app.get('/readyz', ready);
    edge.app.get('/health', ready);
  },
};
