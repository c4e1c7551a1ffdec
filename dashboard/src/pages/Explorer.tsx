import { GraphiQL } from 'graphiql';
import type { Fetcher } from '@graphiql/toolkit';
import 'graphiql/setup-workers/vite';
import 'graphiql/style.css';
import { currentCsrfToken } from '../api';
import type { GraphKind } from '../graphql';

/**
 * GraphiQL over /graphql as the signed-in user (cookie, CSRF token, the app's mode): bundled with
 * its Monaco workers, so it works without any network but the platform's.
 */
export function Explorer({ kind }: { kind: GraphKind }) {
  const fetcher: Fetcher = async (params) => {
    const response = await fetch('/graphql', {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'content-type': 'application/json', 'x-csrf-token': currentCsrfToken(), 'x-dashboard-kind': kind },
      body: JSON.stringify(params),
    });
    return response.json();
  };
  return (
    <section className="explorer" aria-label="GraphQL explorer">
      <GraphiQL fetcher={fetcher} defaultQuery={'# Queries run as you, in ' + kind + ' mode.\n{\n  apiKeys {\n    id\n    name\n    prefix\n  }\n}\n'} />
    </section>
  );
}
