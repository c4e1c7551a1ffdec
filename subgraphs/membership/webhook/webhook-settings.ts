/** How outbound webhook requests are made; read from the environment by platform/config.ts. */
export interface WebhookSettings {
  /** Allows private, loopback and link-local targets (local development and tests only). */
  allowPrivateTargets: boolean;
  /** Whole-request timeout of one delivery attempt. */
  timeoutMs: number;
}

/** Safe defaults: public targets only, 10 s per attempt. */
export const DEFAULT_WEBHOOK_SETTINGS: WebhookSettings = { allowPrivateTargets: false, timeoutMs: 10_000 };

/** The part of the membership context that webhook registration reads. */
export interface WebhookSettingsContext {
  webhookSettings?: WebhookSettings;
}
