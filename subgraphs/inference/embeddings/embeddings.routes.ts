import type { GenerationService } from '../generation/generation.service.js';
import { outcomeFor, WireError, wireErrorOf } from '../protocol/wire-error.js';
import { parseWire } from '../protocol/wire-body.js';
import type { WireRoute } from '../protocol/wire-route.js';
import { USAGE_INTERFACE, WIRE_INTERFACES } from '../protocol/wire-interface.js';
import { base64Of, embeddingsSchema, inputsOf } from './embeddings-request.js';

/**
 * OpenAI's `POST /v1/embeddings` on every OpenAI-compatible interface: the body's inputs go to
 * the best provider whose model embeds, and the answer is OpenAI's list of vectors (floats, or
 * base64 of little-endian float32 as OpenAI's clients decode it), usage recorded as chat's.
 */
export function embeddingsRoutes(service: GenerationService): WireRoute[] {
  return [
    {
      method: 'POST',
      path: '/v1/embeddings',
      interfaces: WIRE_INTERFACES,
      summary: 'Embeddings of texts or token arrays (OpenAI wire format; encoding_format float or base64) on models that embed',
      handle: async ({ iface, req, res, caller, signal }) => {
        const body = parseWire(iface, embeddingsSchema, req.body);
        if (body.provider !== undefined && iface !== 'gateway') throw new WireError(400, 'unknown_parameter', 'Unrecognized request argument supplied: provider', 'provider');
        let result: Awaited<ReturnType<GenerationService['embed']>>;
        try {
          result = await service.embed({
            interface: iface,
            usageInterface: USAGE_INTERFACE[iface],
            caller,
            ...(body.provider !== undefined ? { provider: body.provider } : {}),
            model: body.model,
            inputs: inputsOf(body.input),
            ...(body.dimensions != null ? { dimensions: body.dimensions } : {}),
            signal,
            outcomeOf: outcomeFor(iface),
          });
        } catch (error) {
          if (signal.aborted) throw error;
          const answered = wireErrorOf(iface, error);
          // A fault of ours goes to the router as it was thrown, to be logged with its stack.
          throw answered.status === 500 ? error : answered;
        }
        if (result.vectors.length !== inputsOf(body.input).length) throw new WireError(502, 'upstream_error', 'The engine answered a different number of vectors than inputs');
        const base64 = body.encoding_format === 'base64';
        res.json({
          object: 'list',
          data: result.vectors.map((vector, index) => ({ object: 'embedding', index, embedding: base64 ? base64Of(vector) : vector })),
          model: result.model,
          usage: { prompt_tokens: result.promptTokens, total_tokens: result.promptTokens },
        });
      },
    },
  ];
}
