import type { Response } from 'express';
import { openAIErrorBody, type OpenAIErrorBody } from '../../../core/openai-error-body.js';
import type { z } from 'zod';
import { EngineError } from '../engine/text-engine.js';
import { ImageEngineError } from '../engine/image-engine.js';
import { ImageInputRefused } from '../image-input/image-input-refused.js';
import { ProviderRefusal } from '../provider-registry/provider-refusal.js';
import { badValueStatus, type WireInterface } from './wire-interface.js';
import { DATABASE_UNAVAILABLE_MESSAGE, isDatabaseUnavailable } from '../../../core/database-unavailable.js';

/** An error as an interface answers it: status, OpenAI's error code, message, the parameter at fault. */
export class WireError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly param: string | null = null,
    /** Seconds for Retry-After (429, 503). */
    readonly retryAfter?: number,
  ) {
    super(message);
    this.name = 'WireError';
  }
}

/** OpenAI's error body (core/openai-error-body.ts, shared with the edge's refusals). */
export function errorBody(error: WireError): OpenAIErrorBody {
  return openAIErrorBody(error);
}

export function sendWireError(res: Response, error: WireError): void {
  if (error.retryAfter !== undefined) res.setHeader('Retry-After', String(error.retryAfter));
  res.status(error.status).json(errorBody(error));
}

const paramOf = (path: readonly PropertyKey[]): string | null =>
  path.length ? path.map((segment, i) => (typeof segment === 'number' ? `[${segment}]` : `${i ? '.' : ''}${String(segment)}`)).join('') : null;

/**
 * A zod failure as the interface's table words it: a required parameter missing, a parameter the
 * interface does not take, or a body that is no object are 400 everywhere; a value of the wrong
 * type or out of range is 422 on Service T and the gateway, 400 on Service I and the proxy.
 */
export function validationError(iface: WireInterface, error: z.ZodError): WireError {
  const issue = error.issues[0]!;
  const param = paramOf(issue.path);
  if (issue.code === 'unrecognized_keys') {
    const names = issue.keys.map((key) => (param ? `${param}.${key}` : key));
    return new WireError(400, 'unknown_parameter', `Unrecognized request argument${names.length > 1 ? 's' : ''} supplied: ${names.join(', ')}`, names[0] ?? null);
  }
  // A union (a message's content: string or parts) that got nothing is as missing as a plain field.
  if ((issue.code === 'invalid_type' || issue.code === 'invalid_union') && issue.input === undefined) {
    return param === null
      ? new WireError(400, 'invalid_body', 'The request body must be a JSON object')
      : new WireError(400, 'missing_parameter', `Missing required parameter: '${param}'`, param);
  }
  if (issue.code === 'invalid_type' && param === null) return new WireError(400, 'invalid_body', 'The request body must be a JSON object');
  const wrongType = issue.code === 'invalid_type' || issue.code === 'invalid_union';
  return new WireError(
    badValueStatus(iface),
    wrongType ? 'invalid_type' : 'invalid_value',
    `Invalid value for '${param ?? 'body'}': ${issue.message}`,
    param,
  );
}

/** How long a client refused as busy should wait before trying again (seconds). */
export const BUSY_RETRY_AFTER = 1;

/**
 * An engine's or the provider layer's refusal in the interface's terms. A model outside the key's
 * plan is 403 (Service T's table; Service I's has no 403, so there it is 404, as a model the key
 * cannot see); a provider failure is 502, a model loading or every provider down 503.
 */
export function wireErrorOf(iface: WireInterface, error: unknown): WireError {
  if (error instanceof WireError) return error;
  if (error instanceof ImageInputRefused) return new WireError(400, 'image_url_not_supported', error.message, error.param);
  if (error instanceof ImageEngineError) {
    switch (error.reason) {
      case 'invalid_request':
        return new WireError(badValueStatus(iface), 'invalid_value', error.message, error.param ?? null);
      case 'model_not_found':
        return new WireError(404, 'model_not_found', error.message, error.param ?? 'sd_model_checkpoint');
      case 'not_available':
        return new WireError(404, 'not_available', error.message, error.param ?? null);
      case 'upstream_error':
        return new WireError(502, 'upstream_error', error.message);
      case 'unavailable':
        return new WireError(503, 'service_unavailable', error.message, null, 5);
      case 'timeout':
        return new WireError(503, 'timeout', error.message, null, 5);
    }
  }
  if (error instanceof ProviderRefusal) {
    switch (error.reason) {
      case 'unknown_provider':
        return new WireError(badValueStatus(iface), 'invalid_provider', error.message, error.param ?? 'provider');
      case 'model_not_found':
        return new WireError(404, 'model_not_found', error.message, 'model');
      case 'not_on_plan':
        return iface === 'serviceT'
          ? new WireError(403, 'model_not_on_plan', error.message, 'model')
          : new WireError(404, 'model_not_found', error.message, 'model');
      case 'capability_not_served':
        return new WireError(400, 'capability_not_served', error.message, error.param ?? null);
      case 'busy':
        return new WireError(429, 'provider_busy', error.message, error.param ?? null, BUSY_RETRY_AFTER);
      case 'unavailable':
        return new WireError(503, 'service_unavailable', error.message, null, 5);
    }
  }
  if (error instanceof EngineError) {
    switch (error.reason) {
      case 'model_not_found':
        return new WireError(404, 'model_not_found', error.message, error.param ?? 'model');
      case 'invalid_request':
        return new WireError(badValueStatus(iface), 'invalid_value', error.message, error.param ?? null);
      case 'unsupported_parameter':
        return new WireError(badValueStatus(iface), 'unsupported_parameter', error.message, error.param ?? null);
      case 'upstream_error':
        return new WireError(502, 'upstream_error', error.message);
      case 'model_loading':
        return new WireError(503, 'model_loading', error.message, null, 5);
      case 'unavailable':
        return new WireError(503, 'service_unavailable', error.message, null, 5);
      case 'timeout':
        return new WireError(503, 'timeout', error.message, null, 5);
    }
  }
  // The database down or restarting (the usage record, the key's plan): worth a retry.
  if (isDatabaseUnavailable(error)) return new WireError(503, 'service_unavailable', DATABASE_UNAVAILABLE_MESSAGE, null, 2);
  return new WireError(500, 'internal_error', 'An internal error occurred');
}

/** The status and code an interface answers an error with, for usage records (GenerationService's `outcomeOf`). */
export function outcomeFor(iface: WireInterface): (error: unknown) => { status: number; code: string } {
  return (error) => {
    const answered = wireErrorOf(iface, error);
    return { status: answered.status, code: answered.code };
  };
}
