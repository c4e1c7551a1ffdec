import { IMAGE_INPUT_DEFAULTS } from '../../image-input/image-input.js';

/** The OCR engine's limits when its options name none (also the configuration's defaults). */
export const OCR_DEFAULTS = {
  ...IMAGE_INPUT_DEFAULTS,
  workers: 1,
} as const;
