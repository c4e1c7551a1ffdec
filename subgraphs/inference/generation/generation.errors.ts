import { GraphQLError } from 'graphql';
import { DomainError, type ErrorCode } from '../../../core/errors.js';
import { EngineError } from '../engine/text-engine.js';
import { ProviderRefusal } from '../provider-registry/provider-refusal.js';
import { ImageInputRefused } from '../image-input/image-input-refused.js';

/**
 * Codes a generation answers with: the domain's, and RATE_LIMITED, the edge's code for "too many
 * now, retry", since a provider at its maxConcurrency refuses at once rather than queueing and the
 * client handles it the same way. Both it and SERVICE_UNAVAILABLE (an engine that failed, is
 * loading or timed out) pass the error masking: neither is an internal error to hide.
 */
type GenerationErrorCode = ErrorCode | 'RATE_LIMITED';

/** A generation, token count or model listing refused or failed: `extensions.code`, `reason` and `param` as the REST side's error code and param. */
export class GenerationError extends GraphQLError {
  constructor(code: GenerationErrorCode, message: string, extra: { param?: string; reason: string }) {
    super(message, { extensions: { code, ...extra } });
  }
}

/** Invalid input found before any engine saw it (ranges, conflicts, missing content). */
export class GenerationInputError extends DomainError {
  constructor(message: string, param: string | undefined, reason = 'invalid_value') {
    super('BAD_USER_INPUT', message, { ...(param ? { param } : {}), reason });
  }
}

/** The HTTP status a usage record stores for each code, as the REST interfaces would have answered. */
const STATUS_BY_CODE: Record<GenerationErrorCode, number> = {
  BAD_USER_INPUT: 400,
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  RATE_LIMITED: 429,
  INTERNAL_SERVER_ERROR: 500,
  SERVICE_UNAVAILABLE: 503,
};

// Upstream engines word their failures with addresses and upstream bodies; the GraphQL client
// gets a fixed sentence per reason (the log and the usage record keep the detail).
const UNAVAILABLE_MESSAGES: Record<string, string> = {
  upstream_error: 'The provider failed to answer; try again, or name another provider',
  model_loading: 'The model is still loading; try again in a few seconds',
  service_unavailable: 'No provider serving the model is available now; try again later',
  timeout: 'The generation did not finish within the time limit',
};

/** A wire parameter name (`top_p`, `messages[0].content[1].image_url.url`) as the GraphQL input names it (`topP`, `messages[0].parts[1].imageUrl`). */
export function graphqlParam(param: string): string {
  return param
    .replace(/\.content\[/g, '.parts[')
    .replace(/image_url(\.url)?/g, 'imageUrl')
    .replace(/_([a-z])/g, (_, letter: string) => letter.toUpperCase());
}

/**
 * An error of the generation layer as GraphQL answers it; anything unknown is returned as it is,
 * so that the error masking hides it as internal.
 */
export function generationErrorOf(error: unknown): unknown {
  if (error instanceof GraphQLError) return error;
  if (error instanceof ImageInputRefused) return new GenerationInputError(error.message, graphqlParam(error.param), 'image_url_not_supported');
  if (error instanceof ProviderRefusal) {
    switch (error.reason) {
      case 'unknown_provider':
        return new GenerationInputError(error.message, error.param ?? 'provider', 'invalid_provider');
      case 'model_not_found':
        return new GenerationError('NOT_FOUND', error.message, { param: 'model', reason: 'model_not_found' });
      case 'not_on_plan':
        return new GenerationError('FORBIDDEN', error.message, { param: 'model', reason: 'model_not_on_plan' });
      case 'capability_not_served':
        return new GenerationInputError(error.message, error.param ?? 'model', 'capability_not_served');
      case 'busy':
        return new GenerationError('RATE_LIMITED', error.message, { reason: 'provider_busy' });
      case 'unavailable':
        return new GenerationError('SERVICE_UNAVAILABLE', UNAVAILABLE_MESSAGES.service_unavailable!, { reason: 'service_unavailable' });
    }
  }
  if (error instanceof EngineError) {
    switch (error.reason) {
      case 'model_not_found':
        return new GenerationError('NOT_FOUND', error.message, { param: 'model', reason: 'model_not_found' });
      case 'invalid_request':
        return new GenerationInputError(error.message, error.param ? graphqlParam(error.param) : undefined, 'invalid_value');
      case 'unsupported_parameter':
        return new GenerationInputError(error.message, error.param ? graphqlParam(error.param) : undefined, 'unsupported_parameter');
      case 'upstream_error':
      case 'model_loading':
      case 'timeout':
        return new GenerationError('SERVICE_UNAVAILABLE', UNAVAILABLE_MESSAGES[error.reason]!, { reason: error.reason });
      case 'unavailable':
        return new GenerationError('SERVICE_UNAVAILABLE', UNAVAILABLE_MESSAGES.service_unavailable!, { reason: 'service_unavailable' });
    }
  }
  return error;
}

/** How a usage record stores an error: the status the REST interfaces would answer, the reason as its code. */
export function outcomeOf(error: unknown): { status: number; code: string } {
  const mapped = generationErrorOf(error);
  if (mapped instanceof GraphQLError) {
    const { code, reason } = mapped.extensions as { code?: string; reason?: string };
    return { status: STATUS_BY_CODE[code as GenerationErrorCode] ?? 500, code: reason ?? String(code ?? 'internal_error').toLowerCase() };
  }
  return { status: 500, code: 'internal_error' };
}
