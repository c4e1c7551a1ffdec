export interface KeyField {
  kind: 'date' | 'amount' | 'invoice-number' | 'email' | 'iban';
  /** As written in the text. */
  value: string;
  /** Dates as YYYY-MM-DD, amounts as a decimal string ("1234.56"), IBANs without spaces, emails lower-cased. */
  normalized: string;
  /** ISO 4217, for amounts. */
  currency?: string;
  page: number;
  /** Offsets of `value` in the page's text (UTF-16 code units, end exclusive). */
  start: number;
  end: number;
}

const MONTHS: Record<string, number> = {
  january: 1, february: 2, march: 3, april: 4, may: 5, june: 6, july: 7, august: 8, september: 9, october: 10, november: 11, december: 12,
  jan: 1, feb: 2, mar: 3, apr: 4, jun: 6, jul: 7, aug: 8, sep: 9, sept: 9, oct: 10, nov: 11, dec: 12,
};
const MONTH_NAME = '(January|February|March|April|May|June|July|August|September|October|November|December|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sept|Sep|Oct|Nov|Dec)\\.?';

function isoDate(year: number, month: number, day: number): string | null {
  if (year < 1900 || year > 2199 || month < 1 || month > 12 || day < 1) return null;
  const days = new Date(Date.UTC(year, month, 0)).getUTCDate();
  if (day > days) return null;
  return `${year}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`;
}

/**
 * Dates: ISO (2026-11-23), day-first with dots or dashes (23.11.2026, 23-11-2026), slashes
 * (11/23/2026), and with a month name (23 November 2026, Nov 23, 2026). Slashes are ambiguous:
 * a first number over 12 makes it day/month (23/11/2026), a second over 12 month/day (11/23/2026),
 * and when both could be months the US order month/day is taken, since day-first writers mostly
 * use dots. Impossible dates (31.02.2026) are not reported.
 */
export function findDates(text: string, page = 1): KeyField[] {
  const found: KeyField[] = [];
  const push = (match: RegExpExecArray, normalized: string | null) => {
    if (normalized) found.push({ kind: 'date', value: match[0], normalized, page, start: match.index, end: match.index + match[0].length });
  };
  const rules: [RegExp, (m: RegExpExecArray) => string | null][] = [
    [/(?<![\d./-])(\d{4})-(\d{1,2})-(\d{1,2})(?![\d-])/g, (m) => isoDate(+m[1], +m[2], +m[3])],
    [/(?<![\d./-])(\d{1,2})[.-](\d{1,2})[.-](\d{4})(?!\d)(?![.-]\d)/g, (m) => isoDate(+m[3], +m[2], +m[1])],
    [
      /(?<![\d./-])(\d{1,2})\/(\d{1,2})\/(\d{4})(?![\d/])/g,
      (m) => {
        const [a, b, year] = [+m[1], +m[2], +m[3]];
        return a > 12 ? isoDate(year, b, a) : isoDate(year, a, b);
      },
    ],
    [new RegExp(`\\b(\\d{1,2})(?:st|nd|rd|th)?\\.?\\s+${MONTH_NAME},?\\s+(\\d{4})\\b`, 'gi'), (m) => isoDate(+m[3], MONTHS[m[2].toLowerCase()], +m[1])],
    [new RegExp(`\\b${MONTH_NAME}\\s+(\\d{1,2})(?:st|nd|rd|th)?,?\\s+(\\d{4})\\b`, 'gi'), (m) => isoDate(+m[3], MONTHS[m[1].toLowerCase()], +m[2])],
  ];
  for (const [pattern, normalize] of rules) {
    for (const match of text.matchAll(pattern)) push(match as RegExpExecArray, normalize(match as RegExpExecArray));
  }
  return found;
}

// Symbols and codes read as a currency; "$" alone is taken as US dollars.
const CURRENCY_BY_TOKEN: Record<string, string> = { '€': 'EUR', $: 'USD', '£': 'GBP', '¥': 'JPY', 'US$': 'USD', 'CHF': 'CHF', 'FR.': 'CHF', 'SFR.': 'CHF' };
const CURRENCY_CODES = ['EUR', 'USD', 'GBP', 'CHF', 'JPY', 'CAD', 'AUD', 'SEK', 'NOK', 'DKK', 'PLN', 'CZK', 'HUF', 'CNY', 'INR'];
const SYMBOL = '(?:US\\$|€|\\$|£|¥|SFr\\.|Fr\\.)';
const CODE = `(?:${CURRENCY_CODES.join('|')})`;
// Grouped thousands (1.234.567,89 / 1,234.56 / 1 234,56 / 1'234.56) or a plain number with up to 2 decimals.
const NUMBER = "(?:\\d{1,3}(?:[.,'\\u2019\\u00a0\\u202f ]\\d{3})+(?:[.,]\\d{1,2})?|\\d+(?:[.,]\\d{1,2})?)";

function currencyOf(token: string): string {
  const upper = token.toUpperCase();
  return CURRENCY_BY_TOKEN[upper] ?? CURRENCY_BY_TOKEN[token] ?? upper;
}

/**
 * A written number as a decimal string. With both separators the last one is the decimal mark;
 * with one kind only, a single separator followed by one or two digits is a decimal mark and
 * anything else groups thousands ("1.234" is 1234, "12,5" is 12.5).
 */
export function normalizeAmount(written: string): string | null {
  const compact = written.replace(/[\s'\u2019\u00a0\u202f]/g, '');
  const lastDot = compact.lastIndexOf('.');
  const lastComma = compact.lastIndexOf(',');
  let integer = compact;
  let fraction = '';
  if (lastDot >= 0 && lastComma >= 0) {
    const mark = Math.max(lastDot, lastComma);
    integer = compact.slice(0, mark);
    fraction = compact.slice(mark + 1);
  } else if (lastDot >= 0 || lastComma >= 0) {
    const separator = lastDot >= 0 ? '.' : ',';
    const parts = compact.split(separator);
    if (parts.length === 2 && parts[1].length <= 2) {
      integer = parts[0];
      fraction = parts[1];
    }
  }
  integer = integer.replace(/[.,]/g, '');
  if (!/^\d+$/.test(integer) || !/^\d*$/.test(fraction)) return null;
  integer = integer.replace(/^0+(?=\d)/, '');
  return fraction ? `${integer}.${fraction}` : integer;
}

/** Amounts with a currency before or after them (€ 1.234,56, $1,234.56, 1234.56 EUR, CHF 99.-). */
export function findAmounts(text: string, page = 1): KeyField[] {
  const found: KeyField[] = [];
  const before = new RegExp(`(?<![\\p{L}\\d])(${SYMBOL}|${CODE})\\s?(${NUMBER})(?![\\d])`, 'gu');
  const after = new RegExp(`(?<![\\d.,'\\u2019])(${NUMBER})\\s?(${SYMBOL}|${CODE})(?![\\p{L}])`, 'gu');
  const taken: [number, number][] = [];
  for (const match of text.matchAll(before)) {
    const normalized = normalizeAmount(match[2]);
    if (normalized === null) continue;
    const start = match.index + match[0].indexOf(match[2], match[1].length);
    found.push({ kind: 'amount', value: match[0], normalized, currency: currencyOf(match[1]), page, start: match.index, end: match.index + match[0].length });
    taken.push([start, start + match[2].length]);
  }
  for (const match of text.matchAll(after)) {
    // "EUR 5 EUR" style overlaps: the number already claimed by a preceding currency is not reported twice.
    if (taken.some(([s, e]) => match.index < e && match.index + match[1].length > s)) continue;
    const normalized = normalizeAmount(match[1]);
    if (normalized === null) continue;
    found.push({ kind: 'amount', value: match[0], normalized, currency: currencyOf(match[2]), page, start: match.index, end: match.index + match[0].length });
  }
  return found.sort((a, b) => a.start - b.start);
}

/** Invoice numbers after "Invoice No./Nr./Number/#", "Rechnungsnummer", "Facture n°"; the number must hold a digit. */
export function findInvoiceNumbers(text: string, page = 1): KeyField[] {
  const pattern =
    /\b(?:rechnungsnummer|rechnungsnr\.?|invoice-?no\.?)\s*[:#.]?\s*([A-Z0-9][A-Z0-9\-/._]{1,40}[A-Z0-9]|[0-9]{1,3})(?![A-Z0-9])|\b(?:invoice|inv\.|rechnung|facture|factura|fattura)\s*(?:-?\s*(?:no\.?|nr\.?|number|num\.?|nummer|n[°º]|#|id)\s*)?[:#.]?\s*([A-Z0-9][A-Z0-9\-/._]{1,40}[A-Z0-9]|[0-9]{1,3})(?![A-Z0-9])/gi;
  const found: KeyField[] = [];
  for (const match of text.matchAll(pattern)) {
    const value = match[1] ?? match[2];
    if (!/\d/.test(value)) continue;
    // A date right after "Invoice" ("Invoice 23.11.2026") is the invoice's date, not its number.
    if (/^\d{1,4}[./-]\d{1,2}[./-]\d{1,4}$/.test(value)) continue;
    const start = match.index + match[0].lastIndexOf(value);
    found.push({ kind: 'invoice-number', value, normalized: value.toUpperCase(), page, start, end: start + value.length });
  }
  return found;
}

export function findEmails(text: string, page = 1): KeyField[] {
  const pattern = /(?<![\w.%+-])[A-Za-z0-9][A-Za-z0-9._%+-]{0,63}@[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?)*\.[A-Za-z]{2,24}(?![\w-])/g;
  return [...text.matchAll(pattern)].map((m) => ({ kind: 'email' as const, value: m[0], normalized: m[0].toLowerCase(), page, start: m.index, end: m.index + m[0].length }));
}

/** ISO 13616 check: move the first four characters to the end, letters to numbers, remainder mod 97 is 1. */
export function isValidIban(iban: string): boolean {
  if (!/^[A-Z]{2}\d{2}[A-Z0-9]{11,30}$/.test(iban)) return false;
  const rearranged = iban.slice(4) + iban.slice(0, 4);
  let remainder = 0;
  for (const char of rearranged) {
    const value = char >= 'A' ? String(char.charCodeAt(0) - 55) : char;
    for (const digit of value) remainder = (remainder * 10 + Number(digit)) % 97;
  }
  return remainder === 1;
}

/** IBANs, written compact or in groups of four; only those passing the mod-97 check are reported. */
export function findIbans(text: string, page = 1): KeyField[] {
  const pattern = /\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?\b/g;
  const found: KeyField[] = [];
  for (const match of text.matchAll(pattern)) {
    // A following word in capitals may have been swallowed as a last group: try shorter spans.
    let value = match[0];
    while (value.length >= 15) {
      const compact = value.replace(/ /g, '');
      if (isValidIban(compact)) {
        found.push({ kind: 'iban', value, normalized: compact, page, start: match.index, end: match.index + value.length });
        break;
      }
      value = value.slice(0, -1).trimEnd();
    }
  }
  return found;
}

/** Every key field of one page's text, ordered by position. */
export function findKeyFields(text: string, page = 1): KeyField[] {
  return [...findDates(text, page), ...findAmounts(text, page), ...findInvoiceNumbers(text, page), ...findEmails(text, page), ...findIbans(text, page)].sort(
    (a, b) => a.start - b.start || a.kind.localeCompare(b.kind),
  );
}
