import type { InferenceRuntime } from '../inference-context.js';
import type { FailoverHooks, ProviderTarget } from '../provider-registry/provider-registry.js';
import type { UsageEntry } from '../usage/usage-entry.js';
import type { UsageInterface } from '../usage/usage-interface.js';
import type { OutcomeOf } from './generation.service.js';
import type { Caller } from '../protocol/caller.js';

interface FailedAttempt {
  provider: string;
  error: unknown;
  occurredAt: Date;
  latencyMs: number;
}

/**
 * The attempts of one call on its providers, so that each is accounted for: the provider the call
 * ends on is its record's, and an attempt that failed before another provider was tried gets a
 * record of its own, with its provider and the status it would have been answered with. A
 * provider answering 500s then shows its errors, whether or not a retry elsewhere saved the call.
 */
export class AttemptLog {
  /** The provider of the current (last) attempt; the one the caller named, or '' before any attempt. */
  provider: string;
  private failed: FailedAttempt | undefined;
  private attemptStartedAt = performance.now();
  private attemptOccurredAt = new Date();

  constructor(
    private readonly runtime: Pick<InferenceRuntime, 'usage'>,
    private readonly call: { usageInterface: UsageInterface; caller: Caller; model: string; streamed: boolean; outcomeOf: OutcomeOf },
    provider: string,
  ) {
    this.provider = provider;
  }

  /** The hooks for ProviderRegistry.withFailover. */
  readonly hooks: FailoverHooks = {
    onAttempt: (target: ProviderTarget) => {
      // Another attempt follows a failed one: the failed one was not the call's answer, so it is recorded apart.
      if (this.failed) this.recordFailed(this.failed);
      this.failed = undefined;
      this.provider = target.provider.id;
      this.attemptStartedAt = performance.now();
      this.attemptOccurredAt = new Date();
    },
    onAttemptFailed: (target: ProviderTarget, error: unknown) => {
      this.failed = { provider: target.provider.id, error, occurredAt: this.attemptOccurredAt, latencyMs: performance.now() - this.attemptStartedAt };
    },
  };

  /** Who called, as a usage record names them. */
  who(): Pick<UsageEntry, 'interface' | 'accountId' | 'keyId' | 'clientAddress'> {
    const { caller } = this.call;
    return {
      interface: this.call.usageInterface,
      accountId: caller.principal?.accountId ?? null,
      keyId: caller.principal?.keyId ?? null,
      clientAddress: caller.principal ? null : (caller.address ?? null),
    };
  }

  private recordFailed(attempt: FailedAttempt): void {
    const outcome = this.call.outcomeOf(attempt.error);
    this.runtime.usage.record({
      ...this.who(),
      provider: attempt.provider,
      model: this.call.model,
      promptTokens: 0,
      completionTokens: 0,
      latencyMs: attempt.latencyMs,
      timeToFirstTokenMs: null,
      streamed: this.call.streamed,
      status: outcome.status,
      errorCode: outcome.code,
      occurredAt: attempt.occurredAt,
    });
  }
}
