import { idempotency, respondWith } from '../../idempotency/idempotency.js';
import type { PublishedInterface } from '../../published-interface.js';
import { createRestBridge, openApiPath } from '../../rest/rest-bridge.js';
import { documentRest } from './document-upload.js';
import { financeReportCsv } from './finance-report-csv.js';
import { membershipErrorFormat } from './membership.error-body.js';
import { membershipInterface } from './membership.keys.js';
import { membershipOpenApi } from './membership.openapi.js';
import { membershipExpanded, membershipHandwrittenRoutes, membershipHidden, membershipRoutes } from './membership.routes.js';

/** The membership platform's REST API (live and test keys, Stripe's conventions), from the federated graph. */
export const membershipRest: PublishedInterface = {
  name: 'membership',
  errorBodies: (options) => [[options.restBases.membership, membershipErrorFormat]],
  mount(edge) {
    const { options } = edge;
    const base = options.restBases.membership;
    edge.mountAt(
      base,
      edge.guard(membershipInterface(options.rateLimits), [openApiPath(base)]),
      // Document bytes stream to the membership subgraph: before the Idempotency-Key step, which buffers bodies.
      documentRest({
        basePath: base,
        apollo: edge.apollo,
        subgraphUrl: options.subgraphUrls.membership,
        internalSecret: options.internalSecret,
        maxUploadBytes: options.documents.maxUploadBytes,
        jsonMaxDepth: edge.jsonMaxDepth,
      }),
      idempotency(edge.identityOrm, { respond: respondWith(membershipErrorFormat), owner: edge.idempotencyOwner }),
      // GET /finance/reports?format=csv: the same report as CSV; sofa answers JSON only.
      financeReportCsv({ basePath: base, apollo: edge.apollo }),
      createRestBridge({
        basePath: base,
        schema: edge.apiSchema,
        apollo: edge.apollo,
        passthrough: edge.graph.passthrough,
        routes: membershipRoutes,
        handwritten: membershipHandwrittenRoutes,
        expanded: membershipExpanded,
        hidden: membershipHidden,
        title: 'Membership Management Platform API',
        description: 'Members, events, finance, documents, chat, jobs and tenders. Served from the federated graph.',
        errorFormat: membershipErrorFormat,
        openApi: membershipOpenApi,
        jsonMaxDepth: edge.jsonMaxDepth,
      }),
    );
  },
};
