import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { IpEnricher } from '../enrichment/ip-enricher.js';
import { TraceSource } from '../trace/trace-source.js';
import { TraceStopReason } from '../trace/trace-stop-reason.js';
import { blankReply, type ParsedHop, type ParsedReply, type ParsedTrace } from './parsed-trace.js';

const require = createRequire(import.meta.url);

/** Pakistani access and transit networks (real ASNs): PTCL, Cyber Net, Nayatel, Transworld, Jazz, Zong, Wateen, StormFiber. */
const PK_ASNS = [17557, 9541, 23674, 38193, 45669, 59257, 38547, 136525];
/** Foreign transit and content networks: Lumen, Arelion, Cogent, Tata, NTT, Google, Cloudflare, Amazon, DTAG, Etisalat, Singtel. */
const TRANSIT_ASNS = [3356, 1299, 174, 6453, 2914];
const FOREIGN_ASNS = [...TRANSIT_ASNS, 15169, 13335, 16509, 3320, 8966, 7473];
const PK_DOMAINS = ['www.pta.gov.pk', 'www.dawn.com', 'www.hbl.com', 'www.nadra.gov.pk', 'www.daraz.pk', 'www.jang.com.pk', 'www.pakwheels.com', 'www.zameen.com'];
const FOREIGN_DOMAINS: [string, number][] = [
  ['www.google.com', 15169], ['www.youtube.com', 15169], ['www.cloudflare.com', 13335], ['www.amazon.com', 16509],
  ['www.telekom.de', 3320], ['www.etisalat.ae', 8966], ['www.singtel.com', 7473], ['www.wikipedia.org', 13335],
];

/** A small seeded PRNG (mulberry32): the same seed gives the same data. */
function prng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Endpoint {
  ip: string;
  asn: number;
  country: string | null;
  domain: string | null;
}

function numberToIpv4(n: number): string {
  return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
}

/**
 * Realistic synthetic traceroutes for demos and benchmarks: probes in Pakistani cities and abroad
 * on real ASNs (addresses drawn from those ASNs' real prefixes, so enrichment finds their cities),
 * all four directions, RTTs that grow with distance, silent hops, failed traces and anomalies
 * (inflated RTT, domestic paths detouring abroad, unusual transit).
 */
export class SyntheticTraceGenerator {
  private readonly random: () => number;
  private readonly prefixes = new Map<number, [number, number][]>();
  private readonly pkProbes: Endpoint[] = [];
  private readonly foreignProbes: Endpoint[] = [];
  private readonly pkTargets: Endpoint[] = [];
  private readonly foreignTargets: Endpoint[] = [];
  private msm = 90_000_000;

  constructor(
    private readonly enricher: IpEnricher,
    seed = 1,
  ) {
    this.random = prng(seed);
    const wanted = new Set([...PK_ASNS, ...FOREIGN_ASNS]);
    for (const line of readFileSync(require.resolve('@ip-location-db/asn/asn-ipv4-num.csv'), 'utf8').split('\n')) {
      const [start, end, asn] = line.split(',', 3);
      if (!wanted.has(Number(asn))) continue;
      const list = this.prefixes.get(Number(asn)) ?? [];
      list.push([Number(start), Number(end)]);
      this.prefixes.set(Number(asn), list);
    }
    for (let i = 0; i < 48; i++) this.pkProbes.push(this.endpoint(PK_ASNS[i % PK_ASNS.length], 'PK', null, true));
    for (let i = 0; i < 24; i++) this.foreignProbes.push(this.endpoint(FOREIGN_ASNS[i % FOREIGN_ASNS.length], null, null, true));
    PK_DOMAINS.forEach((domain, i) => this.pkTargets.push(this.endpoint(PK_ASNS[i % PK_ASNS.length], 'PK', domain, false)));
    for (const [domain, asn] of FOREIGN_DOMAINS) this.foreignTargets.push(this.endpoint(asn, null, domain, false));
  }

  private pick<T>(list: readonly T[]): T {
    return list[Math.floor(this.random() * list.length)];
  }

  /** An address of `asn`; for probes, one whose city the databases know (in `country` when given). */
  private address(asn: number, country: string | null, wantCity: boolean): string {
    const ranges = this.prefixes.get(asn) ?? [[0x08080800, 0x080808ff]];
    let fallback = '';
    for (let attempt = 0; attempt < 40; attempt++) {
      const [start, end] = this.pick(ranges);
      const ip = numberToIpv4(start + 1 + Math.floor(this.random() * Math.max(1, end - start - 1)));
      const info = this.enricher.lookup(ip);
      if (info.private || info.asn !== asn) continue;
      fallback ||= ip;
      if (country && info.country !== country) continue;
      if (wantCity && !info.city) continue;
      return ip;
    }
    return fallback || numberToIpv4(ranges[0][0] + 1);
  }

  private endpoint(asn: number, country: string | null, domain: string | null, wantCity: boolean): Endpoint {
    const ip = this.address(asn, country, wantCity);
    return { ip, asn, country: this.enricher.lookup(ip).country, domain };
  }

  /** `count` traces measured at random times in the `days` before `now`. */
  *generate(count: number, options: { days?: number; now?: Date } = {}): Generator<{ position: string; trace: ParsedTrace }> {
    const span = (options.days ?? 7) * 86_400_000;
    const now = (options.now ?? new Date()).getTime();
    for (let i = 0; i < count; i++) {
      yield { position: `synthetic ${i + 1}`, trace: this.trace(new Date(now - Math.floor(this.random() * span))) };
    }
  }

  private trace(measuredAt: Date): ParsedTrace {
    const roll = this.random();
    const anomalous = this.random() < 0.04;
    const failed = this.random() < 0.06;
    let probe: Endpoint;
    let target: Endpoint;
    if (roll < 0.3) [probe, target] = [this.pick(this.foreignProbes), this.pick(this.pkTargets)];
    else if (roll < 0.6) [probe, target] = [this.pick(this.pkProbes), this.pick(this.foreignTargets)];
    else if (roll < 0.85) {
      probe = this.pick(this.pkProbes);
      target = this.pick(this.pkTargets.filter((t) => t.asn !== probe.asn));
    } else {
      probe = this.pick(this.pkProbes);
      target = this.pkTargets.find((t) => t.asn === probe.asn) ?? { ...this.endpoint(probe.asn, 'PK', null, false), domain: `cdn.${probe.asn}.example.pk` };
    }
    const international = (probe.country === 'PK') !== (target.country === 'PK');
    // Networks crossed: the probe's, the transit between, the target's.
    const path: number[] = [probe.asn];
    if (international) path.push(this.pick([17557, 38193]), this.pick(TRANSIT_ASNS));
    else if (probe.asn !== target.asn) path.push(17557);
    if (anomalous && !international) path.push(this.pick([6453, 8966]));
    if (anomalous && international) path.push(this.pick(FOREIGN_ASNS));
    path.push(target.asn);
    const baseRtt = international ? 110 + this.random() * 120 : 8 + this.random() * 30;
    const inflation = anomalous ? 2.5 + this.random() * 2 : 1;
    const hops: ParsedHop[] = [{ hop: 1, sent: 3, replies: this.replies('192.168.1.1', 0.6), error: null }];
    const stations = path.flatMap((asn, index) => Array.from({ length: index === path.length - 1 ? 1 : 1 + Math.floor(this.random() * 2) }, () => asn));
    stations.forEach((asn, index) => {
      const last = index === stations.length - 1;
      const rtt = (baseRtt * inflation * (index + 1)) / stations.length;
      const ip = last ? target.ip : this.address(asn, null, false);
      const silent = !last && this.random() < 0.08;
      hops.push({ hop: index + 2, sent: 3, replies: silent ? this.silence() : this.replies(ip, rtt), error: null });
    });
    if (failed) {
      const cut = 2 + Math.floor(this.random() * (hops.length - 2));
      hops.splice(cut);
      for (let n = 0; n < 3; n++) hops.push({ hop: cut + n + 1, sent: 3, replies: this.silence(), error: null });
      hops.push({ hop: 255, sent: 3, replies: this.silence(), error: null });
    }
    const msmId = this.msm + (target.ip.length % 97);
    const probeId = 1_000_000 + (this.pkProbes.indexOf(probe) >= 0 ? this.pkProbes.indexOf(probe) : 100 + this.foreignProbes.indexOf(probe));
    return {
      source: TraceSource.SYNTHETIC,
      measurementKey: `synthetic:${msmId}:${probeId}:${target.ip}`,
      probeKey: `synthetic:${probeId}`,
      msmId,
      probeId,
      measuredAt,
      af: 4,
      protocol: 'ICMP',
      probeIp: probe.ip,
      targetIp: target.ip,
      targetDomain: target.domain,
      probeAddresses: [probe.ip],
      hops,
      error: null,
      // A failed trace here ends like an Atlas one that ran into its gap limit: silence, then hop 255.
      stopReason: failed ? TraceStopReason.gaplimit : TraceStopReason.completed,
    };
  }

  private replies(ip: string, rtt: number): ParsedReply[] {
    return Array.from({ length: 3 }, () => ({ ...blankReply('reply'), ip, rtt: Math.round((rtt + this.random() * rtt * 0.1) * 1000) / 1000 }));
  }

  private silence(): ParsedReply[] {
    return Array.from({ length: 3 }, () => blankReply('timeout'));
  }
}
