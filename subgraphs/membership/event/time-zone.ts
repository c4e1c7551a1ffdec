/**
 * The canonical IANA name of `zone` (e.g. `europe/berlin` -> `Europe/Berlin`), or null when it is
 * not one. Offsets such as `+01:00` are refused: PostgreSQL reads their sign the POSIX way round.
 */
export function canonicalTimeZone(zone: string): string | null {
  let resolved: string;
  try {
    resolved = new Intl.DateTimeFormat('en-US', { timeZone: zone.trim() }).resolvedOptions().timeZone;
  } catch {
    return null;
  }
  return resolved === 'UTC' || /^[A-Z][A-Za-z_]*(\/[A-Za-z0-9_+-]+)+$/.test(resolved) ? resolved : null;
}

/** `at` as an RFC 3339 local time in `zone`, with that zone's offset then, e.g. 2026-12-01T19:00:00+01:00. */
export function localDateTime(at: Date, zone: string): string {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      timeZoneName: 'longOffset',
    })
      .formatToParts(at)
      .map((p) => [p.type, p.value]),
  );
  const offset = parts.timeZoneName === 'GMT' ? '+00:00' : parts.timeZoneName.replace('GMT', '');
  return `${parts.year}-${parts.month}-${parts.day}T${parts.hour}:${parts.minute}:${parts.second}${offset}`;
}
