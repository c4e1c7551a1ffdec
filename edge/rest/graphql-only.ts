/**
 * The public GraphQL operations with no REST route of their own, and why. Everything else a
 * GraphQL client can do has a REST route (test/edge/rest/rest-coverage.test.ts holds the graph
 * to this list: a new operation needs a route or a line here).
 */
export const GRAPHQL_ONLY: Readonly<Record<string, string>> = {
  // Served by other REST paths than a route of the bridge.
  'Query.financeReportCsv': 'GET /finance/reports?format=csv',
  'Query.matchingJob': 'GET /jobs/match?jobId=…',
  'Mutation.createDocumentUpload': 'POST /documents/upload, or PUT /documents/uploads/{id} after this ticket',
  'Mutation.createDocument': 'POST /documents/upload',
  'Mutation.uploadDocumentBase64': 'POST /documents/upload with a JSON body',
  'Mutation.chatCompletion': 'the inference mounts: POST /inference/*/v1/chat/completions',
  'Mutation.completion': 'the inference mounts: POST /inference/*/v1/completions',
  'Mutation.tokenize': 'the inference mounts: POST /inference/*/v1/tokenize',
  'Query.inferenceModels': 'the inference mounts: GET /inference/*/v1/models',
  'Query.inferenceAnalytics': 'the multi-provider gateway: GET /inference/gateway/v1/analytics',
  'Query.inferenceRecommendations': 'the multi-provider gateway: GET /inference/gateway/v1/recommendations',
  // Events: a subscription needs a connection that stays open (graphql-ws on /graphql); webhooks carry the same events over HTTP.
  'Subscription.messageAdded': 'graphql-ws; POST /chat/webhooks for HTTP delivery',
  'Subscription.tenderBidCount': 'graphql-ws',
  'Subscription.jobApplicationStatusChanged': 'graphql-ws',
  'Subscription.providerStatusChanged': 'graphql-ws',
  'Subscription.chatCompletionStream': 'graphql-ws; the inference mounts stream with "stream": true',
  'Subscription.completionStream': 'graphql-ws; the inference mounts stream with "stream": true',
  // Managing keys is a person's job, in the dashboard (GraphQL with a session), as Stripe keeps it in its dashboard.
  'Query.apiKeys': 'the dashboard (Settings, API keys)',
  'Mutation.createApiKey': 'the dashboard (Settings, API keys)',
  'Mutation.revokeApiKey': 'the dashboard (Settings, API keys)',
  // The operators' areas: admin keys and platform admins, through the dashboard and the CLI.
  'Query.tracerouteKeys': 'the traceroute admin area (dashboard) and `cli keys`',
  'Mutation.issueTracerouteKey': 'the traceroute admin area (dashboard) and `cli keys`',
  'Mutation.disableTracerouteKey': 'the traceroute admin area (dashboard) and `cli keys`',
  'Mutation.enableTracerouteKey': 'the traceroute admin area (dashboard) and `cli keys`',
  'Mutation.expireTracerouteKey': 'the traceroute admin area (dashboard) and `cli keys`',
  'Mutation.importTraces': '`cli traceroute import`',
  'Mutation.qualifyVendor': 'an admin key, over GraphQL (the platform operator decides)',
  'Query.providers': 'the inference admin area (dashboard)',
  'Query.provider': 'the inference admin area (dashboard)',
  'Mutation.setProviderStatus': 'the inference admin area (dashboard)',
  'Query.inferenceUsage': 'the inference admin area (dashboard)',
  'Query.inferenceUsageRecord': 'the inference admin area (dashboard)',
  'Query.inferenceUsageSummary': 'the inference admin area (dashboard)',
};
