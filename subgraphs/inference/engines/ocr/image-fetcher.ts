import http from 'node:http';
import https from 'node:https';
import { guardedLookup, refuseLiteralPrivateHost, WebhookTargetError } from '../../../shared/ssrf-guard.js';
import { EngineError } from '../../engine/text-engine.js';

export interface ImageFetchLimits {
  maxBytes: number;
  timeoutMs: number;
  /** The generation's signal: when it aborts, the fetch stops and its reason is thrown. */
  signal: AbortSignal;
}

/**
 * Reads the image an http(s) URL points at. Refusals are EngineErrors without `param` (the
 * engine names the message part); an abort of `limits.signal` throws its reason.
 */
export type ImageFetcher = (url: URL, limits: ImageFetchLimits) => Promise<Buffer>;

/**
 * A fetcher behind the webhooks' SSRF guard: a literal private address is refused before any
 * connection, a host name at connect time (so DNS rebinding cannot reach the inside either),
 * unless `allowPrivateTargets`. Redirects are not followed: the target of one was never checked.
 */
export function guardedImageFetcher(allowPrivateTargets: boolean): ImageFetcher {
  return async (url, limits) => {
    try {
      refuseLiteralPrivateHost(url, allowPrivateTargets);
    } catch (error) {
      throw refusal(error);
    }
    const timeout = AbortSignal.timeout(limits.timeoutMs);
    const signal = AbortSignal.any([limits.signal, timeout]);
    try {
      return await new Promise<Buffer>((resolve, reject) => {
        const request = (url.protocol === 'https:' ? https : http).get(
          url,
          { agent: false, signal, lookup: guardedLookup(allowPrivateTargets) as never, headers: { accept: 'image/*', 'user-agent': 'membership-platform-ocr/1' } },
          (response) => {
            const status = response.statusCode ?? 0;
            if (status < 200 || status >= 300) {
              response.resume();
              return reject(new EngineError('invalid_request', `The image URL answered HTTP ${status}${status >= 300 && status < 400 ? ' (redirects are not followed)' : ''}`));
            }
            const declared = Number(response.headers['content-length']);
            if (Number.isFinite(declared) && declared > limits.maxBytes) {
              response.destroy();
              return reject(tooLarge(limits.maxBytes));
            }
            const chunks: Buffer[] = [];
            let size = 0;
            response.on('data', (chunk: Buffer) => {
              size += chunk.length;
              if (size > limits.maxBytes) {
                response.destroy();
                reject(tooLarge(limits.maxBytes));
                return;
              }
              chunks.push(chunk);
            });
            response.on('end', () => resolve(Buffer.concat(chunks)));
            response.on('error', reject);
          },
        );
        request.on('error', reject);
      });
    } catch (error) {
      if (limits.signal.aborted) throw limits.signal.reason;
      if (timeout.aborted) throw new EngineError('invalid_request', `The image URL did not answer within ${limits.timeoutMs} ms`);
      throw refusal(error);
    }
  };
}

function tooLarge(maxBytes: number): EngineError {
  return new EngineError('invalid_request', `The image at the URL is larger than ${maxBytes} bytes`);
}

function refusal(error: unknown): EngineError {
  if (error instanceof EngineError) return error;
  // The guard's detail (what the host resolved to) stays out: it would map the internal network.
  if (error instanceof WebhookTargetError) return new EngineError('invalid_request', 'The image URL is not allowed');
  const code = (error as NodeJS.ErrnoException).code;
  return new EngineError('invalid_request', `The image URL could not be read${code ? ` (${code})` : ''}`);
}
