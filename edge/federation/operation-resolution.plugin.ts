import type { ApolloServerPlugin } from '@apollo/server';
import { GraphQLError } from 'graphql';

/**
 * A document without the operation a request names (or with several and no name), or a
 * subscription sent over HTTP, is the client's mistake: answer 400 here, before the gateway's
 * executor turns it into a 500. Subscriptions reach the websocket's own executor, never this one.
 */
export const operationResolutionPlugin: ApolloServerPlugin = {
  async requestDidStart() {
    return {
      async didResolveOperation({ operation, request }) {
        if (operation?.operation === 'subscription') {
          throw new GraphQLError('Subscriptions are served over the websocket on /graphql (the graphql-ws protocol); HTTP takes queries and mutations', {
            extensions: { code: 'BAD_REQUEST', http: { status: 400 } },
          });
        }
        if (operation) return;
        throw operationResolutionError(request.operationName, { http: { status: 400 } });
      },
    };
  },
};

/** The client's error for a document without the operation it names, or with several and no name (the websocket's too). */
export function operationResolutionError(operationName: string | null | undefined, extensions: Record<string, unknown> = {}): GraphQLError {
  return new GraphQLError(
    operationName ? `The document has no operation named "${operationName}"` : 'The document has several operations: name the one to run in operationName',
    { extensions: { code: 'OPERATION_RESOLUTION_FAILURE', ...extensions } },
  );
}
