/** The OCR engine's limits when its options name none (also the configuration's defaults). */
export const OCR_DEFAULTS = {
  maxImageBytes: 10 * 1024 * 1024,
  imageFetchTimeoutMs: 10_000,
  workers: 1,
} as const;
