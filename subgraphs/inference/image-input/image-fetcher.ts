import { lookup, type LookupAddress } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { BlockList, isIP } from 'node:net';
import { isPrivateAddress, TARGET_NOT_ALLOWED, WebhookTargetError } from '../../shared/ssrf-guard.js';
import { EngineError } from '../engine/text-engine.js';

export interface ImageFetchLimits {
  maxBytes: number;
  /** For the whole fetch, every redirect included. */
  timeoutMs: number;
  /** The generation's signal: when it aborts, the fetch stops and its reason is thrown. */
  signal: AbortSignal;
}

/**
 * Reads the image an http(s) URL points at. Refusals are EngineErrors without `param` (the
 * caller names the message part); an abort of `limits.signal` throws its reason.
 */
export type ImageFetcher = (url: URL, limits: ImageFetchLimits) => Promise<Buffer>;

/**
 * Which private addresses (loopback, RFC 1918, link-local, ...) an image URL may reach: none
 * (false, the default), all (true: development and tests), or those within the listed addresses
 * and CIDR networks (an internal image host, say), each hop of a redirect alike.
 */
export type PrivateImageUrls = boolean | readonly string[];

/** How many redirects an image URL may take: browsers allow 20, image hosts and CDNs need one or two. */
export const MAX_IMAGE_REDIRECTS = 5;

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** Whether an entry of PrivateImageUrls is an address or a CIDR network, for the configuration's check. */
export function isAddressOrNetwork(entry: string): boolean {
  const [address, prefix, extra] = entry.split('/');
  const family = isIP(address ?? '');
  if (!family || extra !== undefined) return false;
  if (prefix === undefined) return true;
  return /^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128);
}

/** The addresses a fetch may connect to: every public one, and the private ones `allowed` lets through. */
function addressPolicy(allowed: PrivateImageUrls): (address: string) => boolean {
  if (allowed === true) return () => true;
  if (allowed === false || allowed.length === 0) return (address) => !isPrivateAddress(address);
  const list = new BlockList();
  for (const entry of allowed) {
    const [address, prefix] = entry.split('/') as [string, string | undefined];
    const family = isIP(address) === 4 ? 'ipv4' : 'ipv6';
    if (prefix === undefined) list.addAddress(address, family);
    else list.addSubnet(address, Number(prefix), family);
  }
  return (address) => !isPrivateAddress(address) || list.check(address, isIP(address) === 4 ? 'ipv4' : 'ipv6');
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

// Checked at connect time, every address the name resolves to: a DNS answer that changed since
// (rebinding) cannot reach the inside either.
function guardedLookup(permits: (address: string) => boolean) {
  return (hostname: string, options: { all?: boolean; family?: number }, callback: LookupCallback): void => {
    lookup(hostname, { ...options, all: true, verbatim: true }, (error, addresses) => {
      if (error) return callback(error, '');
      const list = addresses as LookupAddress[];
      const refused = list.find((entry) => !permits(entry.address));
      if (refused) {
        const err: NodeJS.ErrnoException = new WebhookTargetError(TARGET_NOT_ALLOWED, `${hostname} resolves to ${refused.address}, a private or reserved address`);
        err.code = 'EPRIVATEADDRESS';
        return callback(err, '');
      }
      if (options.all) return callback(null, list);
      callback(null, list[0]!.address, list[0]!.family);
    });
  };
}

/**
 * A fetcher behind the webhooks' SSRF guard (its table of private and reserved addresses): a
 * literal address is checked before any connection, a host name at connect time. Redirects are
 * followed, at most MAX_IMAGE_REDIRECTS, each hop's URL checked like the first (http or https, no
 * credentials, an address the policy permits), all within the one time limit.
 */
export function guardedImageFetcher(allowPrivate: PrivateImageUrls): ImageFetcher {
  const permits = addressPolicy(allowPrivate);
  const lookupGuarded = guardedLookup(permits);
  return async (first, limits) => {
    const timeout = AbortSignal.timeout(limits.timeoutMs);
    const signal = AbortSignal.any([limits.signal, timeout]);
    let url = first;
    try {
      for (let hop = 0; ; hop++) {
        checkHop(url, permits, hop);
        const answer = await get(url, signal, lookupGuarded, limits.maxBytes);
        if (answer.kind === 'image') return answer.bytes;
        if (hop === MAX_IMAGE_REDIRECTS) throw new EngineError('invalid_request', `The image URL redirected more than ${MAX_IMAGE_REDIRECTS} times`);
        try {
          url = new URL(answer.location, url);
        } catch {
          throw new EngineError('invalid_request', 'The image URL redirected to an invalid URL');
        }
      }
    } catch (error) {
      if (limits.signal.aborted) throw limits.signal.reason;
      if (timeout.aborted) throw new EngineError('invalid_request', `The image URL did not answer within ${limits.timeoutMs} ms`);
      throw refusal(error);
    }
  };
}

function checkHop(url: URL, permits: (address: string) => boolean, hop: number): void {
  const where = hop === 0 ? 'The image URL' : 'The image URL redirected to a URL that';
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new EngineError('invalid_request', hop === 0 ? 'An image url must be an http(s) URL or a base64 data URI' : `${where} is not http(s)`);
  if (url.username || url.password) throw new EngineError('invalid_request', hop === 0 ? 'An image URL must not carry credentials' : `${where} carries credentials`);
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  // A literal address is connected to without any lookup: checked here.
  if (isIP(host) && !permits(host)) throw new WebhookTargetError(TARGET_NOT_ALLOWED, `${host} is a private or reserved address`);
}

type Answer = { kind: 'image'; bytes: Buffer } | { kind: 'redirect'; location: string };

function get(url: URL, signal: AbortSignal, lookupGuarded: ReturnType<typeof guardedLookup>, maxBytes: number): Promise<Answer> {
  return new Promise<Answer>((resolve, reject) => {
    const request = (url.protocol === 'https:' ? https : http).get(
      url,
      { agent: false, signal, lookup: lookupGuarded as never, headers: { accept: 'image/*', 'user-agent': 'membership-platform-images/1' } },
      (response) => {
        const status = response.statusCode ?? 0;
        const location = response.headers.location;
        if (REDIRECTS.has(status) && location) {
          response.resume();
          return resolve({ kind: 'redirect', location });
        }
        if (status < 200 || status >= 300) {
          response.resume();
          return reject(new EngineError('invalid_request', `The image URL answered HTTP ${status}`));
        }
        const declared = Number(response.headers['content-length']);
        if (Number.isFinite(declared) && declared > maxBytes) {
          response.destroy();
          return reject(tooLarge(maxBytes));
        }
        const chunks: Buffer[] = [];
        let size = 0;
        response.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > maxBytes) {
            response.destroy();
            reject(tooLarge(maxBytes));
            return;
          }
          chunks.push(chunk);
        });
        response.on('end', () => resolve({ kind: 'image', bytes: Buffer.concat(chunks) }));
        response.on('error', reject);
      },
    );
    request.on('error', reject);
  });
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
