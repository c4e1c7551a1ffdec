/** ICMPv4 destination unreachable codes with a RIPE Atlas letter (RIPE's traceroute result format, `err`). */
const V4_UNREACHABLE: Record<number, string> = { 0: 'N', 1: 'H', 2: 'P', 3: 'p', 13: 'A' };
/** ICMPv6 destination unreachable codes with a RIPE Atlas letter. */
const V6_UNREACHABLE: Record<number, string> = { 0: 'N', 1: 'A', 2: 'h', 3: 'H', 4: 'p' };

/** ICMP types that are a traceroute's ordinary answers: time exceeded, echo reply, packet too big. */
const ORDINARY = { 4: new Set([0, 11]), 6: new Set([2, 3, 129]) };

/**
 * An ICMP answer as an error in RIPE Atlas's words, so both sources read alike: a letter for the
 * unreachable codes Atlas names, else the code as a number; another ICMP type as `icmp <type>/<code>`.
 * Port unreachable from the target itself is how a UDP trace arrives, so it is no error (Atlas
 * does not report it either). Null for ordinary answers.
 */
export function icmpError(af: 4 | 6, type: number | null, code: number | null, fromTarget: boolean): string | null {
  if (type === null) return null;
  if (ORDINARY[af].has(type)) return null;
  const unreachable = af === 4 ? type === 3 : type === 1;
  if (!unreachable) return `icmp ${type}/${code ?? ''}`;
  if (code === null) return 'unreachable';
  const letter = (af === 4 ? V4_UNREACHABLE : V6_UNREACHABLE)[code];
  if (letter === 'p' && fromTarget) return null;
  return letter ?? String(code);
}
