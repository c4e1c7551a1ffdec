import type { PublishedInterface } from '../published-interface.js';
import { dashboard } from './dashboard/dashboard.interface.js';
import { graphqlHttpAndWebsockets } from './graphql/graphql.interface.js';
import { health } from './health/health.interface.js';
import { inferenceMounts } from './inference/inference.interface.js';
import { internalKeyStore } from './internal-key-store/internal-key-store.interface.js';
import { membershipRest } from './membership/membership.interface.js';
import { tracerouteRest } from './traceroute/traceroute.interface.js';

/**
 * Every interface the edge publishes, in the order requests meet them. /graphql first: a GraphQL
 * request walks no other interface's layers. The REST mounts are matched by prefix, so their
 * order among themselves does not matter; none serves a path under another's.
 */
export const PUBLISHED_INTERFACES: readonly PublishedInterface[] = [
  graphqlHttpAndWebsockets,
  health,
  internalKeyStore,
  dashboard,
  membershipRest,
  tracerouteRest,
  ...inferenceMounts,
];
