import type { NextFunction, Request, Response } from 'express';
import type { RateLimits, RestBases } from '../../edge-settings.js';
import type { EdgeInterface } from '../../access/edge-interface.js';
import type { PublishedInterface } from '../../published-interface.js';
import { openAIErrorFormat } from './inference.error-body.js';
import { keylessInferenceInterface, serviceIInterface, serviceTInterface } from './inference.keys.js';
import { callInference, relayAgent, relayInference } from './inference-relay.js';

/**
 * One OpenAI-compatible mount: the inference subgraph's interface `target` behind the edge, which
 * authenticates (keyed mounts), counts, and relays. The four mounts differ only in these.
 */
function inferenceMount(name: string, baseOf: (bases: RestBases) => string, target: string, rules: (limits: RateLimits, base: string) => EdgeInterface): PublishedInterface {
  return {
    name,
    errorBodies: (options) => [[baseOf(options.restBases), openAIErrorFormat]],
    mount(edge) {
      const { options } = edge;
      const base = baseOf(options.restBases);
      const edgeRules = rules(options.rateLimits, base);
      const keyless = edgeRules.keyless === true;
      const agent = options.localInference ? undefined : relayAgent();
      const relay = options.localInference
        ? callInference({ mount: base, target, keyless, routes: options.localInference })
        : relayInference({ mount: base, target, subgraphUrl: options.subgraphUrls.inference, internalSecret: options.internalSecret, keyless, dispatcher: agent! });
      // Keyless interfaces: a client's Authorization header is ignored, and dropped so nothing behind relies on it.
      if (keyless) edge.mountAt(base, dropAuthorization, edge.guard(edgeRules), relay);
      else edge.mountAt(base, edge.guard(edgeRules), relay);
      return { stop: async () => agent?.close() };
    },
  };
}

function dropAuthorization(req: Request, _res: Response, next: NextFunction): void {
  delete req.headers.authorization;
  next();
}

/** Service T (text keys), Service I (image and text keys), the keyless proxy and the keyless multi-provider gateway. */
export const inferenceMounts: PublishedInterface[] = [
  inferenceMount('service-t', (bases) => bases.inferenceText, '/openai/serviceT', (limits) => serviceTInterface(limits)),
  inferenceMount('service-i', (bases) => bases.inferenceImage, '/openai/serviceI', (limits, base) => serviceIInterface(limits, base)),
  inferenceMount('inference-proxy', (bases) => bases.inferenceProxy, '/openai/proxy', (limits) => keylessInferenceInterface(limits, 'inference-proxy')),
  inferenceMount('inference-gateway', (bases) => bases.inferenceGateway, '/openai/gateway', (limits) => keylessInferenceInterface(limits, 'inference-gateway')),
];
