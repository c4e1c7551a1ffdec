/** An OpenAI-compatible chat completions endpoint that honours `guided_choice` (the platform's own inference gateway, vLLM). */
export interface ZeroShotSettings {
  /** Up to and including the version, e.g. http://127.0.0.1:4000/inference/gateway/v1; /chat/completions is appended. */
  baseUrl: string;
  apiKey?: string;
  model: string;
  /** Per request (default 10 s); a slower answer is dropped and classification goes on without it. */
  timeoutMs?: number;
}

export interface ClassificationSettings {
  /** Zero-shot classification, off when null. */
  zeroShot: ZeroShotSettings | null;
  /** The trained classifier decides only when its top probability reaches this (0-1). */
  classifierThreshold: number;
}

export const DEFAULT_CLASSIFICATION_SETTINGS: ClassificationSettings = { zeroShot: null, classifierThreshold: 0.6 };
export const DEFAULT_ZERO_SHOT_TIMEOUT_MS = 10_000;
