/**
 * What the embedded upscalers accept and produce. Inputs are capped at the spec's largest generated
 * image (2048 x 2048), so a caller cannot hand sharp a decompression bomb; outputs at 8192 a side,
 * enough for the largest input at the WebUI's usual 4x.
 */
export const UPSCALE_LIMITS = {
  maxInputSide: 2048,
  maxOutputSide: 8192,
  /** Decoded bytes of one input image. */
  maxInputBytes: 32 * 1024 * 1024,
} as const;

export type UpscaleLimits = { maxInputSide: number; maxOutputSide: number; maxInputBytes: number };
