import type { Request } from 'express';
import type { RateLimits } from '../../edge-settings.js';
import type { ApiError } from '../../rest/api-error.js';
import type { EdgeInterface, KeyRefusal } from '../../access/edge-interface.js';
import { bearerCredential, perMinuteBreach, windowsOf } from '../../access/key-windows.js';
import type { KeyKind } from '../../../core/principal.js';
import { openAIErrorFormat } from './inference.error-body.js';

function openAIRefusal(reason: KeyRefusal, needed: KeyKind, req: Request): ApiError {
  switch (reason) {
    case 'missing':
      return { status: 401, code: 'missing_api_key', message: "You didn't provide an API key. Send it as 'Authorization: Bearer <API key>'." };
    case 'wrong_kind':
      return { status: 403, code: 'wrong_key_kind', message: `This endpoint (${req.method} ${req.path}) needs ${needed === 'image' ? 'an image' : 'a text'} key.` };
    default:
      return { status: 401, code: 'invalid_api_key', message: 'Incorrect API key provided.' };
  }
}

/** Service T at /inference/text: text keys only. */
export function serviceTInterface(limits: RateLimits): EdgeInterface {
  return {
    name: 'service-t',
    credential: bearerCredential,
    kinds: () => ['text'],
    refusal: (reason, req) => openAIRefusal(reason, 'text', req),
    windows: (principal, key, address) => windowsOf(limits, principal, key, address),
    exceeded: (window) => ({ ...perMinuteBreach(window), code: 'rate_limit_exceeded' }),
    format: openAIErrorFormat,
  };
}

/** Service I's text and chat endpoints, which take a text key. */
const SERVICE_I_TEXT_PATHS = /^\/v1\/(chat\/completions|completions|tokenize|embeddings|models(\/.+)?|responses(\/[^/]+)?)\/?$/;

/** Service I's image endpoints (the spec's and the WebUI's own), which take an image key: the subgraph's image route table. */
const SERVICE_I_IMAGE_PATHS =
  /^\/(v1\/(txt2img|img2img|upscale-img|img-samplers|upscalers|img-options|parallel-requests)|sdapi\/v1\/(sd-models|txt2img|img2img|extra-single-image|samplers|upscalers|options|progress))\/?$/;

/** Which key kind a Service I path needs, from its path below the mount; null for a path it does not have, which either kind may hear is 404. */
export function serviceIKind(pathBelowMount: string): KeyKind | null {
  if (SERVICE_I_TEXT_PATHS.test(pathBelowMount)) return 'text';
  return SERVICE_I_IMAGE_PATHS.test(pathBelowMount) ? 'image' : null;
}

/** Service I at /inference/image: image endpoints need an image key, text endpoints a text key, and a path it lacks is 404 for either. */
export function serviceIInterface(limits: RateLimits, base: string): EdgeInterface {
  const needed = (req: Request) => serviceIKind(req.path.slice(base.length) || '/');
  return {
    name: 'service-i',
    credential: bearerCredential,
    kinds: (req) => {
      const kind = needed(req);
      return kind ? [kind] : ['text', 'image'];
    },
    refusal: (reason, req) => openAIRefusal(reason, needed(req) ?? 'image', req),
    windows: (principal, key, address) => windowsOf(limits, principal, key, address),
    exceeded: perMinuteBreach,
    format: openAIErrorFormat,
  };
}

/**
 * The keyless inference interfaces (the proxy and the gateway): no key, and every request counted
 * per client address in the window of requests without a valid key (the abuse limit the spec asks
 * of the proxy: its parallel limit is per address too, in the inference subgraph).
 */
export function keylessInferenceInterface(limits: RateLimits, name: 'inference-proxy' | 'inference-gateway'): EdgeInterface {
  return {
    name,
    keyless: true,
    credential: () => undefined,
    kinds: () => [],
    refusal: (reason, req) => openAIRefusal(reason, 'text', req),
    windows: (_principal, _key, address) => windowsOf(limits, undefined, undefined, address),
    exceeded: perMinuteBreach,
    format: openAIErrorFormat,
  };
}
