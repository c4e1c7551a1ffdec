/** One bad entry of the inference configuration: where it is (e.g. `providers.provider_b.engines[0].url`) and what is wrong. */
export interface ConfigIssue {
  path: string;
  message: string;
}

/** The inference configuration cannot be used; the message lists every bad entry by its path. */
export class InferenceConfigError extends Error {
  constructor(
    readonly source: string,
    readonly issues: ConfigIssue[],
  ) {
    super(`Invalid inference configuration (${source}):\n${issues.map((i) => `  ${i.path}: ${i.message}`).join('\n')}`);
    this.name = 'InferenceConfigError';
  }
}
