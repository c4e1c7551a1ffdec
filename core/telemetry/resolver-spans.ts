import type { ApolloServerPlugin } from '@apollo/server';
import { SpanStatusCode, type Tracer } from '@opentelemetry/api';

/**
 * Light resolver spans: one per root field of an operation (`resolve Query.members`), from its
 * resolver's start until its value is complete, under the request's span. Nested fields get
 * none: a page of members would make thousands, and SQL spans already show where time goes.
 */
export function resolverSpans(tracer: Tracer): ApolloServerPlugin {
  return {
    async requestDidStart() {
      return {
        async executionDidStart() {
          return {
            willResolveField({ info }) {
              if (info.path.prev !== undefined) return;
              const span = tracer.startSpan(`resolve ${info.parentType.name}.${info.fieldName}`, { attributes: { 'graphql.field.path': String(info.path.key) } });
              return (error) => {
                if (error) span.setStatus({ code: SpanStatusCode.ERROR, message: error.message });
                span.end();
              };
            },
          };
        },
      };
    },
  };
}
