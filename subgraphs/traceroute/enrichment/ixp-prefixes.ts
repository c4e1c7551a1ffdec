import { BlockList, isIP } from 'node:net';

/**
 * Peering LANs of large Internet exchange points, as the exchanges publish them (PeeringDB's ixpfx
 * records). A hop on one is a router's port on the exchange's shared LAN: its address belongs to
 * the exchange, not to the network the packet crossed into, so the AS path does not attribute it.
 * The shipped ASN data has no such flag (it names the exchange's own AS for some of these LANs
 * and no AS for others), hence this short list; it is a seed, not a census: extend it from
 * PeeringDB when a path needs another exchange.
 */
const IXP_LANS: { name: string; prefixes: [string, number][] }[] = [
  { name: 'AMS-IX', prefixes: [['80.249.208.0', 21], ['195.69.144.0', 22], ['2001:7f8:1::', 64]] },
  { name: 'DE-CIX Frankfurt', prefixes: [['80.81.192.0', 21], ['2001:7f8::', 64]] },
  { name: 'LINX LON1', prefixes: [['195.66.224.0', 22], ['2001:7f8:4::', 64]] },
  { name: 'MIX Milan', prefixes: [['217.29.66.0', 23], ['2001:7f8:b:100::', 64]] },
  { name: 'France-IX Paris', prefixes: [['37.49.236.0', 22], ['2001:7f8:54::', 64]] },
  { name: 'NL-ix', prefixes: [['193.239.116.0', 22], ['2001:7f8:13::', 64]] },
  { name: 'Equinix Ashburn', prefixes: [['206.126.236.0', 22], ['2001:504:0:2::', 64]] },
];

const LANS = IXP_LANS.map(({ name, prefixes }) => {
  const list = new BlockList();
  for (const [net, bits] of prefixes) list.addSubnet(net, bits, isIP(net) === 6 ? 'ipv6' : 'ipv4');
  return { name, list };
});

/** The exchange whose peering LAN holds `ip`, or null. */
export function ixpOf(ip: string | null): string | null {
  const family = ip ? isIP(ip) : 0;
  if (!family) return null;
  return LANS.find(({ list }) => list.check(ip!, family === 4 ? 'ipv4' : 'ipv6'))?.name ?? null;
}
