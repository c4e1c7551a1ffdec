import { TraceDirection } from '../trace/trace-direction.js';

export const HOME_COUNTRY = 'PK';

interface End {
  country: string | null;
  asn: number | null;
}

/**
 * The direction rule. Probe in PK, target abroad: pk_to_outside. Probe abroad, target in PK:
 * outside_to_pk. Both ends in PK: within_isp when both ends are in the same known ASN, else
 * cross_isp. Neither end in PK (or a country unknown on both ends): the border does not apply and
 * the same network test decides, within_isp for one ASN, cross_isp otherwise. An unknown country
 * counts as not PK.
 */
export function directionOf(probe: End, target: End): TraceDirection {
  const probeHome = probe.country === HOME_COUNTRY;
  const targetHome = target.country === HOME_COUNTRY;
  if (probeHome && !targetHome) return TraceDirection.pk_to_outside;
  if (!probeHome && targetHome) return TraceDirection.outside_to_pk;
  return probe.asn !== null && probe.asn === target.asn ? TraceDirection.within_isp : TraceDirection.cross_isp;
}
