import type { EntityManager } from '@mikro-orm/postgresql';
import type { Baseline } from '../scoring/anomaly.js';
import type { TraceRow } from './trace-builder.js';

const TRACE_COLUMNS: [string, string][] = [
  ['id', 'uuid'], ['measured_at', 'timestamptz'], ['measurement_key', 'varchar'], ['source', 'text'], ['msm_id', 'int'],
  ['probe_id', 'int'], ['direction', 'text'], ['status', 'text'], ['af', 'smallint'], ['protocol', 'varchar'],
  ['probe_ip', 'varchar'], ['probe_city', 'varchar'], ['probe_country', 'char(2)'], ['probe_asn', 'int'],
  ['probe_as_name', 'varchar'], ['probe_lat', 'real'], ['probe_lon', 'real'], ['target_domain', 'varchar'],
  ['target_ip', 'varchar'], ['target_city', 'varchar'], ['target_country', 'char(2)'], ['target_asn', 'int'],
  ['target_as_name', 'varchar'], ['target_lat', 'real'], ['target_lon', 'real'], ['hop_count', 'smallint'],
  ['responding_hops', 'smallint'], ['loss', 'real'], ['rtt_ms', 'real'], ['as_path', 'int[]'], ['anomaly_score', 'real'],
  ['anomaly', 'jsonb'], ['hops', 'jsonb'], ['error', 'varchar'], ['stop_reason', 'text'], ['hop_ips', 'inet[]'], ['hop_asns', 'int[]'],
  ['source_record', 'text'], ['provenance', 'jsonb'],
];
const NAMES = TRACE_COLUMNS.map(([name]) => `"${name}"`).join(', ');
const RECORD = TRACE_COLUMNS.map(([name, type]) => `"${name}" ${type}`).join(', ');

/** Months whose partition exists, per database. */
const knownPartitions = new Map<string, Set<string>>();

function monthOf(iso: string): string {
  return iso.slice(0, 7);
}

export interface StoredKey {
  measurementKey: string;
  measuredAt: string;
}

const identity = (key: string, at: string) => `${key}\u0000${new Date(at).getTime()}`;

/** SQL of the trace import: partitions, duplicates, baselines and the rows themselves. */
export class TraceStore {
  constructor(private readonly em: EntityManager) {}

  /**
   * Creates the monthly partitions the rows need. Each is created under an advisory lock, in a
   * transaction of its own, so concurrent imports of a new month do not collide.
   */
  async ensurePartitions(measuredAt: string[]): Promise<void> {
    const database = String(this.em.config.get('clientUrl'));
    const known = knownPartitions.get(database) ?? new Set<string>();
    knownPartitions.set(database, known);
    for (const month of new Set(measuredAt.map(monthOf))) {
      if (known.has(month)) continue;
      const name = `trace_${month.replace('-', '_')}`;
      const from = `${month}-01T00:00:00Z`;
      const next = new Date(from);
      next.setUTCMonth(next.getUTCMonth() + 1);
      await this.em.transactional(async (em) => {
        const connection = em.getConnection();
        const ctx = em.getTransactionContext();
        await connection.execute(`select pg_advisory_xact_lock(hashtext(?))`, [`traceroute.${name}`], 'all', ctx);
        await connection.execute(
          `create table if not exists "traceroute"."${name}" partition of "traceroute"."trace" for values from ('${from}') to ('${next.toISOString()}')`,
          [],
          'run',
          ctx,
        );
      });
      known.add(month);
    }
  }

  /** Which of these identities are stored already. */
  async existing(keys: StoredKey[]): Promise<Set<string>> {
    if (!keys.length) return new Set();
    const rows = await this.em.getConnection().execute<{ measurement_key: string; measured_at: Date }[]>(
      `select t.measurement_key, t.measured_at from "traceroute"."trace" t
       join jsonb_to_recordset(?::jsonb) as k(key varchar, at timestamptz) on t.measurement_key = k.key and t.measured_at = k.at`,
      [JSON.stringify(keys.map((k) => ({ key: k.measurementKey, at: k.measuredAt })))],
      'all',
      this.em.getTransactionContext(),
    );
    return new Set(rows.map((r) => identity(r.measurement_key, new Date(r.measured_at).toISOString())));
  }

  static identity(key: string, at: string): string {
    return identity(key, at);
  }

  /** Baselines of these probe-target pairs, locked until the transaction ends. */
  async baselines(pairs: { probeKey: string; targetIp: string }[]): Promise<Map<string, Baseline>> {
    if (!pairs.length) return new Map();
    const rows = await this.em.getConnection().execute<
      { probe_key: string; target_ip: string; samples: number; rtt_ms: number | null; as_path: string; known_asns: string }[]
    >(
      `select b.* from "traceroute"."path_baseline" b
       join jsonb_to_recordset(?::jsonb) as k(p varchar, t varchar) on b.probe_key = k.p and b.target_ip = k.t
       for update of b`,
      [JSON.stringify(pairs.map((p) => ({ p: p.probeKey, t: p.targetIp })))],
      'all',
      this.em.getTransactionContext(),
    );
    const asns = (text: string) => (text ? text.split(' ').map(Number) : []);
    return new Map(
      rows.map((r) => [
        `${r.probe_key} ${r.target_ip}`,
        { samples: r.samples, rttMs: r.rtt_ms, asPath: asns(r.as_path), knownAsns: new Set(asns(r.known_asns)) },
      ]),
    );
  }

  /** Inserts rows; a row whose identity is stored already (a concurrent import) is skipped. Returns the ids stored. */
  async insert(rows: TraceRow[]): Promise<Set<string>> {
    if (!rows.length) return new Set();
    const inserted = await this.em.getConnection().execute<{ id: string }[]>(
      `insert into "traceroute"."trace" (${NAMES}, "created_at")
       select ${NAMES}, now() from jsonb_to_recordset(?::jsonb) as r(${RECORD})
       on conflict do nothing returning id`,
      [JSON.stringify(rows)],
      'all',
      this.em.getTransactionContext(),
    );
    return new Set(inserted.map((r) => r.id));
  }

  async saveBaselines(baselines: Map<string, Baseline>): Promise<void> {
    if (!baselines.size) return;
    const rows = [...baselines].map(([pair, b]) => {
      const [probeKey, targetIp] = pair.split(' ');
      return { p: probeKey, t: targetIp, s: b.samples, r: b.rttMs, a: b.asPath.join(' '), k: [...b.knownAsns].join(' ') };
    });
    await this.em.getConnection().execute(
      `insert into "traceroute"."path_baseline" (probe_key, target_ip, samples, rtt_ms, as_path, known_asns, updated_at)
       select p, t, s, r, a, k, now() from jsonb_to_recordset(?::jsonb) as x(p varchar, t varchar, s int, r float8, a text, k text)
       on conflict (probe_key, target_ip) do update set samples = excluded.samples, rtt_ms = excluded.rtt_ms,
         as_path = excluded.as_path, known_asns = excluded.known_asns, updated_at = excluded.updated_at`,
      [JSON.stringify(rows)],
      'run',
      this.em.getTransactionContext(),
    );
  }
}
