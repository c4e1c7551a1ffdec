import type { SourceMetadata } from './parsed-trace.js';

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);
const asn = (value: unknown) => (Number.isInteger(value) && (value as number) > 0 && (value as number) < 2 ** 31 ? (value as number) : null);
const coordinate = (value: unknown, limit: number) => (typeof value === 'number' && Number.isFinite(value) && Math.abs(value) <= limit ? value : null);

/** The probes of a `{results, probes}` file, by id, read once per file. */
const probeSections = new WeakMap<Json, Map<number, Json>>();

function probesOf(envelope: Json | undefined): Map<number, Json> {
  if (!envelope) return new Map();
  let probes = probeSections.get(envelope);
  if (!probes) {
    // As the RIPE Atlas probe API lists them ([{id, ...}]), or keyed by id.
    const section = envelope.probes;
    const entries: Json[] = Array.isArray(section)
      ? section.filter(isObject)
      : isObject(section)
        ? Object.entries(section).flatMap(([id, probe]) => (isObject(probe) ? [{ id: Number(id), ...probe }] : []))
        : [];
    probes = new Map(entries.filter((p) => Number.isInteger(p.id)).map((p) => [p.id as number, p]));
    probeSections.set(envelope, probes);
  }
  return probes;
}

/**
 * What a RIPE Atlas result's file says of its probe and target at measurement time: the probe in
 * the file's probe section (the RIPE Atlas probe API's object: country_code, asn_v4, asn_v6,
 * geometry.coordinates [longitude, latitude]) or in a `probe` member of the result, and the
 * target's AS in `meta_data.dst_asn` (of the result, or of the file for its measurement). The
 * probe's AS is the one of the trace's address family. Null when the file says none of it.
 */
export function atlasMetadata(record: Json, envelope: Json | undefined, af: 4 | 6): SourceMetadata | null {
  const probe = isObject(record.probe) ? record.probe : probesOf(envelope).get(record.prb_id as number);
  const fileMeta = isObject(envelope?.meta_data) && (envelope.meta_data.msm_id === undefined || envelope.meta_data.msm_id === record.msm_id) ? envelope.meta_data : undefined;
  const meta = isObject(record.meta_data) ? record.meta_data : fileMeta;
  const point = isObject(probe?.geometry) && Array.isArray(probe.geometry.coordinates) ? probe.geometry.coordinates : [];
  const country = typeof probe?.country_code === 'string' && /^[A-Za-z]{2}$/.test(probe.country_code) ? probe.country_code.toUpperCase() : null;
  const metadata: SourceMetadata = {
    probeCountry: country,
    probeAsn: asn(af === 6 ? probe?.asn_v6 : probe?.asn_v4),
    probeLatitude: coordinate(point[1] ?? probe?.latitude, 90),
    probeLongitude: coordinate(point[0] ?? probe?.longitude, 180),
    targetAsn: asn(meta?.dst_asn),
  };
  // Coordinates come as a pair or not at all.
  if (metadata.probeLatitude === null || metadata.probeLongitude === null) metadata.probeLatitude = metadata.probeLongitude = null;
  return Object.values(metadata).some((value) => value !== null) ? metadata : null;
}
