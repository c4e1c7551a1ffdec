import type { NextFunction, Request, Response } from 'express';
import { GraphQLError } from 'graphql';
import { nestsDeeperThan, tooDeepMessage } from '../../../core/json-depth.js';

/** The refusal of GraphQL variables or extensions nested past the bound, over HTTP or a websocket. */
export function tooDeepGraphQLError(limit: number): GraphQLError {
  return new GraphQLError(tooDeepMessage(limit), { extensions: { code: 'BAD_USER_INPUT', reason: 'invalid_body' } });
}

/** A GET's `variables` or `extensions` parameter as JSON; text that does not parse is left to Apollo to refuse. */
function parsedParameter(req: Request, name: string): unknown {
  const value = req.query[name];
  if (typeof value !== 'string') return value;
  try {
    return JSON.parse(value);
  } catch {
    return undefined;
  }
}

/**
 * Refuses a /graphql request whose JSON (the POST body, a GET's variables and extensions) nests
 * past `limit` with 400 BAD_USER_INPUT, before Apollo or the gateway walks it: the subgraph fetch
 * serialises variables recursively and would exhaust the stack a few thousand levels down.
 */
export function graphqlDepthGuard(limit: number) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const deep =
      req.method === 'GET' || req.method === 'HEAD'
        ? nestsDeeperThan(parsedParameter(req, 'variables'), limit) || nestsDeeperThan(parsedParameter(req, 'extensions'), limit)
        : nestsDeeperThan(req.body, limit);
    if (!deep) return next();
    const error = tooDeepGraphQLError(limit);
    res.status(400).json({ errors: [{ message: error.message, extensions: { ...error.extensions, requestId: String(req.id) } }] });
  };
}
