import type { PublishedInterface } from '../../published-interface.js';
import { createRestBridge, openApiPath } from '../../rest/rest-bridge.js';
import { relayStream } from './export-relay.js';
import { tracerouteErrorFormat } from './traceroute.error-body.js';
import { tracerouteInterface } from './traceroute.keys.js';
import { tracerouteOpenApi } from './traceroute.openapi.js';
import { tracerouteExpanded, tracerouteHandwrittenRoutes, tracerouteRestName, tracerouteRoutes, tracerouteStreamRoutes } from './traceroute.routes.js';

/** The traceroute public API (traceroute keys in X-API-Key or api_key, hourly and daily limits). */
export const tracerouteRest: PublishedInterface = {
  name: 'traceroute',
  errorBodies: (options) => [[options.restBases.traceroute, tracerouteErrorFormat]],
  mount(edge) {
    const { options } = edge;
    const base = options.restBases.traceroute;
    edge.mountAt(
      base,
      edge.guard(tracerouteInterface(options.rateLimits), [openApiPath(base)]),
      // The export streams PostgreSQL's COPY from the traceroute subgraph (sofa cannot stream).
      relayStream({
        mount: base,
        path: tracerouteStreamRoutes.export.path,
        subgraphUrl: options.subgraphUrls[tracerouteStreamRoutes.export.subgraph],
        internalSecret: options.internalSecret,
        format: tracerouteErrorFormat,
      }),
      createRestBridge({
        basePath: base,
        schema: edge.apiSchema,
        apollo: edge.apollo,
        passthrough: edge.graph.passthrough,
        routes: tracerouteRoutes,
        expanded: tracerouteExpanded,
        restName: tracerouteRestName,
        handwritten: tracerouteHandwrittenRoutes,
        // The key may come as a query parameter (X-API-Key's alternative in the spec).
        interfaceQuery: ['api_key'],
        title: 'Traceroute Public API',
        description: 'Traceroute measurements of the national internet observatory.',
        errorFormat: tracerouteErrorFormat,
        openApi: tracerouteOpenApi(options.tracerouteExport),
        jsonMaxDepth: edge.jsonMaxDepth,
      }),
    );
  },
};
