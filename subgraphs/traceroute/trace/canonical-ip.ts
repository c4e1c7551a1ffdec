import { isIP, SocketAddress } from 'node:net';

/**
 * An address in one spelling (RFC 5952 for IPv6: lower case, zeros compressed, as PostgreSQL's
 * inet prints it), so that `2001:DB8:0::1` and `2001:db8::1` are the same stored value and the same
 * filter. Anything that is not an address comes back unchanged.
 */
export function canonicalIp<T extends string | null>(ip: T): T {
  if (ip === null) return ip;
  const family = isIP(ip);
  if (family !== 6) return ip;
  return new SocketAddress({ address: ip, family: 'ipv6' }).address as T;
}
