import type { NextFunction, Request, Response } from 'express';
import type { EdgeContext } from '../../../core/edge-context.js';
import type { QueryPassthrough } from '../../federation/query-passthrough.js';

/** The context a request's short way made, which Apollo's pipeline then takes over (with its answer already fetched). */
const CONTEXT = Symbol('edge context');
type WithContext = Request & { [CONTEXT]?: EdgeContext };

/** What Apollo Server writes for a single result with no Accept header, `*\/*` or `application/json`. */
const JSON_TYPE = 'application/json; charset=utf-8';

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * /graphql's short way, before Apollo Server's request pipeline: a POST whose query text Apollo
 * already accepted as one subgraph fetch answered as asked (QueryPassthrough.sendAccepted) is
 * fetched and answered as Apollo would answer it (the same status, type and body text). Parsing,
 * validation with every armor rule and operation resolution depend on the text alone, and it
 * passed them; the variable check runs on every request. Anything else (a new text, extensions
 * such as persisted queries, another Accept, variables that do not coerce, errors in the answer,
 * a subgraph down) goes through Apollo's pipeline with the same context, which completes an answer
 * already fetched rather than fetching again. The edge's rules all ran before this handler.
 * Apollo's pipeline was about a third of the edge's CPU per lookup at 100 connections (docs/profiling.md).
 */
export function acceptedOperations(
  passthrough: QueryPassthrough,
  contextOf: (req: Request) => EdgeContext,
  apollo: (req: Request, res: Response) => Promise<void>,
) {
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    try {
      const body: unknown = req.body;
      const accept = req.headers.accept;
      if (
        req.method === 'POST' &&
        isRecord(body) &&
        typeof body.query === 'string' &&
        body.extensions === undefined &&
        (body.operationName === undefined || body.operationName === null || typeof body.operationName === 'string') &&
        (body.variables === undefined || body.variables === null || isRecord(body.variables)) &&
        (accept === undefined || accept === '*/*' || accept === 'application/json')
      ) {
        const context = contextOf(req);
        const answer = await passthrough.sendAccepted(body.query, body.operationName ?? undefined, (body.variables ?? undefined) as Record<string, unknown> | undefined, context);
        if (answer) {
          res.statusCode = 200;
          res.setHeader('content-type', JSON_TYPE);
          res.end(`${JSON.stringify(answer)}\n`);
          return;
        }
        (req as WithContext)[CONTEXT] = context;
      }
      await apollo(req, res);
    } catch (error) {
      next(error);
    }
  };
}

/** The context for Apollo's pipeline: the one the short way made for this request, if it made one. */
export function contextFor(req: Request, contextOf: (req: Request) => EdgeContext): EdgeContext {
  return (req as WithContext)[CONTEXT] ?? contextOf(req);
}
