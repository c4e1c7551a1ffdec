/**
 * Why the provider layer turned a request away before any engine saw it. Interfaces map the
 * reason to their status: `unknown_provider` 400 (422 on Service T), `model_not_found` 404,
 * `not_on_plan` 403, `capability_not_served` 400, `busy` 429 (the provider is at its
 * maxConcurrency: refused at once, never queued), `unavailable` 503 (every provider that serves
 * the model failed before answering).
 */
export type ProviderRefusalReason = 'unknown_provider' | 'model_not_found' | 'not_on_plan' | 'capability_not_served' | 'busy' | 'unavailable';

export class ProviderRefusal extends Error {
  constructor(
    readonly reason: ProviderRefusalReason,
    message: string,
    /** The request field at fault (`provider`, `model`), when there is one. */
    readonly param?: string,
  ) {
    super(message);
    this.name = 'ProviderRefusal';
  }
}
