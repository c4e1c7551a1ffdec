import type { ErrorFormat } from '../../rest/api-error.js';
import { openAIErrorBody } from '../../../core/openai-error-body.js';

/** The inference interfaces: OpenAI's `{"error": {message, type, param, code}}`, which their SDKs parse. */
export const openAIErrorFormat: ErrorFormat = (error) => openAIErrorBody(error);
