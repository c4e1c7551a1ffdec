import type { Request, Response } from 'express';
import { HeaderMap, type ApolloServer, type BaseContext } from '@apollo/server';

/**
 * Apollo Server on an Express path: what @as-integrations/express5's `expressMiddleware` does,
 * without the two costs it adds to every request that nothing here uses:
 *   - `url.parse` of the whole URL to find its query string (Node's legacy parser; an indexOf will do);
 *   - `res.send`, which hashes every body into an ETag (useless on a POST, and a GraphQL GET is
 *     not revalidated by anyone) and works out its length and type again.
 * Together about 3% of a lookup's CPU at the edge and the same again in the subgraph it reaches
 * (docs/profiling.md). The body is written with `res.end`, which sets Content-Length itself and
 * sends no body for HEAD. The REST bridge's GETs keep Express's ETags: they go through res.json.
 */
export function apolloMiddleware<Context extends BaseContext>(
  server: ApolloServer<Context>,
  options: { context: (args: { req: Request; res: Response }) => Promise<Context> },
): (req: Request, res: Response) => Promise<void> {
  server.assertStarted('apolloMiddleware()');
  return async (req, res) => {
    if (!('body' in req)) {
      // The JSON body parser must run first; without it Apollo would see every POST as empty.
      res.statusCode = 500;
      res.end('`req.body` is not set: the JSON body parser must run before the GraphQL handler');
      return;
    }
    const headers = new HeaderMap();
    for (const name in req.headers) {
      const value = req.headers[name];
      if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
    }
    const query = req.url.indexOf('?');
    const response = await server.executeHTTPGraphQLRequest({
      httpGraphQLRequest: { method: req.method.toUpperCase(), headers, search: query === -1 ? '' : req.url.slice(query), body: req.body },
      context: () => options.context({ req, res }),
    });
    for (const [name, value] of response.headers) res.setHeader(name, value);
    res.statusCode = response.status ?? 200;
    if (response.body.kind === 'complete') {
      res.end(response.body.string);
      return;
    }
    // Incremental delivery (@defer): each part as it comes, flushed through compression if any.
    for await (const chunk of response.body.asyncIterator) {
      res.write(chunk);
      const flush = (res as Response & { flush?: () => void }).flush;
      if (typeof flush === 'function') flush.call(res);
    }
    res.end();
  };
}
