import { DEFAULT_MAX_ACTIVE_KEYS_PER_ACCOUNT } from '../../../identity/identity.service.js';
import type { PublishedInterface } from '../../published-interface.js';
import { dashboardApi } from './dashboard.routes.js';
import { DashboardService } from './dashboard.service.js';
import { dashboardStatic } from './dashboard-static.js';
import { SignInLimiter } from './sign-in-limiter.js';

/** The dashboard: its files, and its session-authenticated API under `<path>/api`. */
export const dashboard: PublishedInterface = {
  name: 'dashboard',
  mount(edge) {
    const { options, dashboard: settings } = edge;
    edge.app.use(dashboardStatic({ basePath: settings.path, restBases: options.restBases }));
    const signIns = new SignInLimiter(edge.limiter, { perAddress: settings.signInPerAddress, failuresPerEmail: settings.signInFailuresPerEmail });
    const service = new DashboardService(
      edge.identityOrm,
      edge.sessions,
      signIns,
      edge.usage,
      { rateLimits: options.rateLimits, maxActiveKeysPerAccount: options.maxActiveKeysPerAccount ?? DEFAULT_MAX_ACTIVE_KEYS_PER_ACCOUNT },
      edge.limiter,
    );
    edge.app.use(`${settings.path}/api`, dashboardApi(service, { dashboardPath: settings.path, sessionMaxMs: settings.sessionMaxMs, jsonMaxDepth: edge.jsonMaxDepth }));
  },
};
