import type { Request } from 'express';
import type { RateLimits } from '../../edge-settings.js';
import type { EdgeInterface } from '../../access/edge-interface.js';
import { bearerCredential, perMinuteBreach, tracerouteCredential, windowsOf } from '../../access/key-windows.js';
// /graphql takes every key kind, each refused and limited in its own interface's words.
import { MEMBERSHIP_REFUSALS } from '../membership/membership.keys.js';
import { TRACEROUTE_BREACH, TRACEROUTE_REFUSALS } from '../traceroute/traceroute.keys.js';
import { graphqlErrorFormat } from './graphql.error-body.js';

/** A traceroute key sent to /graphql as its spec gives it: in X-API-Key, without a Bearer key. */
const tracerouteKeyOnGraphql = (req: Request) => !bearerCredential(req) && !!req.header('x-api-key')?.trim();

/**
 * /graphql: every key kind as Bearer (each subgraph decides what a kind may see), each kind's own
 * limits; a traceroute key also in X-API-Key, refused then in its spec's words (invalid_key, ...).
 */
export function graphqlInterface(limits: RateLimits): EdgeInterface {
  return {
    name: 'graphql',
    credential: (req) => bearerCredential(req) ?? (tracerouteKeyOnGraphql(req) ? tracerouteCredential(req) : undefined),
    kinds: (req) => (tracerouteKeyOnGraphql(req) ? ['traceroute'] : ['live', 'test', 'text', 'image', 'traceroute', 'admin']),
    refusal: (reason, req) => (tracerouteKeyOnGraphql(req) ? TRACEROUTE_REFUSALS[reason] : MEMBERSHIP_REFUSALS[reason]),
    windows: (principal, key, address) => windowsOf(limits, principal, key, address),
    exceeded: (window) =>
      window.name === 'hourly' || window.name === 'daily' ? TRACEROUTE_BREACH(window) : perMinuteBreach(window),
    format: graphqlErrorFormat,
  };
}
