import { lookup, type LookupAddress } from 'node:dns';
import { promises as dns } from 'node:dns';
import { BlockList, isIP } from 'node:net';

/**
 * Addresses a webhook may not reach unless private targets are allowed: IANA's special-purpose
 * registries (RFC 6890 and successors) less the globally reachable entries. Node's BlockList does
 * the matching, and checks IPv4-mapped IPv6 addresses (::ffff:a.b.c.d, in any spelling) against
 * the IPv4 rules.
 */
const blocked = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], // "this network", including 0.0.0.0
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, cloud metadata services
  ['172.16.0.0', 12],
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation (TEST-NET-1)
  ['192.88.99.0', 24], // 6to4 relay anycast (deprecated)
  ['192.168.0.0', 16],
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation (TEST-NET-2)
  ['203.0.113.0', 24], // documentation (TEST-NET-3)
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved and broadcast
] as const) {
  blocked.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 96], // unspecified, loopback and the deprecated IPv4-compatible addresses (::a.b.c.d)
  ['::ffff:0:0:0', 96], // IPv4-translated (SIIT)
  ['64:ff9b::', 96], // NAT64, which can reach any IPv4 address
  ['64:ff9b:1::', 48], // local-use NAT64
  ['100::', 64], // discard-only
  ['2001::', 32], // Teredo, which tunnels to an IPv4 address
  ['2001:2::', 48], // benchmarking
  ['2001:10::', 28], // ORCHID (deprecated)
  ['2001:db8::', 32], // documentation
  ['2002::', 16], // 6to4, which embeds an IPv4 address
  ['3fff::', 20], // documentation
  ['5f00::', 16], // segment routing (SRv6) SIDs
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
] as const) {
  blocked.addSubnet(network, prefix, 'ipv6');
}

/** Whether `address` is private, loopback, link-local, unique-local, multicast, reserved or unspecified. */
export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return blocked.check(address, 'ipv4');
  if (family !== 6) return true;
  return blocked.check(address, 'ipv6');
}

/**
 * All a tenant is told of a refused target: naming the address a host resolved to, or whether it
 * resolved at all, would let a tenant map the internal network through the platform's DNS.
 */
export const TARGET_NOT_ALLOWED = 'The webhook target is not allowed';

/** A refused webhook URL. `message` is for the tenant; `detail`, when there is more to say, for the log only. */
export class WebhookTargetError extends Error {
  constructor(
    message: string,
    readonly detail?: string,
  ) {
    super(message);
  }
}

/** The URL if it is http(s) with a host, else a WebhookTargetError. */
export function parseWebhookUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new WebhookTargetError('url must be an absolute http or https URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new WebhookTargetError('url must use http or https');
  if (!url.hostname) throw new WebhookTargetError('url must name a host');
  if (url.username || url.password) throw new WebhookTargetError('url must not carry credentials');
  return url;
}

function hostOf(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1');
}

/**
 * Resolves the URL's host (every address) and refuses it when any address is private, unless
 * `allowPrivate`. Used at registration; deliveries check again at connect time (guardedLookup).
 */
export async function checkWebhookTarget(raw: string, allowPrivate: boolean): Promise<URL> {
  const url = parseWebhookUrl(raw);
  if (allowPrivate) return url;
  const host = hostOf(url);
  let addresses: string[];
  if (isIP(host)) addresses = [host];
  else {
    try {
      addresses = (await dns.lookup(host, { all: true, verbatim: true })).map((a) => a.address);
    } catch {
      throw new WebhookTargetError(TARGET_NOT_ALLOWED, `${host} does not resolve`);
    }
  }
  const refused = addresses.find(isPrivateAddress);
  if (refused) throw new WebhookTargetError(TARGET_NOT_ALLOWED, `${host} resolves to ${refused}, a private or reserved address`);
  return url;
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for http.request that refuses private addresses at connect time, so a DNS answer
 * that changed since registration (rebinding) cannot reach the inside either.
 */
export function guardedLookup(allowPrivate: boolean) {
  return (hostname: string, options: { all?: boolean; family?: number }, callback: LookupCallback): void => {
    lookup(hostname, { ...options, all: true, verbatim: true }, (error, addresses) => {
      if (error) return callback(error, '');
      const list = addresses as LookupAddress[];
      const refused = allowPrivate ? undefined : list.find((a) => isPrivateAddress(a.address));
      if (refused) {
        const err: NodeJS.ErrnoException = new WebhookTargetError(TARGET_NOT_ALLOWED, `${hostname} resolves to ${refused.address}, a private or reserved address`);
        err.code = 'EPRIVATEADDRESS';
        return callback(err, '');
      }
      if (options.all) return callback(null, list);
      callback(null, list[0].address, list[0].family);
    });
  };
}

/** A literal IP host is connected to without any lookup: check it here. */
export function refuseLiteralPrivateHost(url: URL, allowPrivate: boolean): void {
  const host = hostOf(url);
  if (!allowPrivate && isIP(host) && isPrivateAddress(host)) {
    throw new WebhookTargetError(TARGET_NOT_ALLOWED, `${host} is a private or reserved address`);
  }
}
