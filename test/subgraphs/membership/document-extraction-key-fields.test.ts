import { describe, expect, it } from 'vitest';
import { decodeEntities, htmlToText } from '../../../subgraphs/membership/document-extraction/html-text.js';
import { findAmounts, findDates, findEmails, findIbans, findInvoiceNumbers, findKeyFields, isValidIban, normalizeAmount } from '../../../subgraphs/membership/document-extraction/key-fields.js';

const normalized = (fields: { normalized: string }[]) => fields.map((f) => f.normalized);

describe('dates', () => {
  it('reads ISO, dotted day-first, and month names, as YYYY-MM-DD', () => {
    expect(normalized(findDates('from 2026-11-23 to 23.11.2026, signed 23 November 2026 and Nov 5, 2026'))).toEqual(['2026-11-23', '2026-11-23', '2026-11-23', '2026-11-05']);
    expect(normalized(findDates('1st December 2026; 3rd Jan. 2027'))).toEqual(['2026-12-01', '2027-01-03']);
  });

  it('resolves slashes: a first number over 12 is the day, otherwise month/day (US)', () => {
    expect(normalized(findDates('11/23/2026'))).toEqual(['2026-11-23']);
    expect(normalized(findDates('23/11/2026'))).toEqual(['2026-11-23']);
    expect(normalized(findDates('03/04/2026'))).toEqual(['2026-03-04']);
  });

  it('skips impossible dates and parts of longer numbers', () => {
    expect(findDates('31.02.2026 and 2026-13-01 and 32/01/2026')).toEqual([]);
    expect(findDates('reference 12.11.20261')).toEqual([]);
    expect(normalized(findDates('29.02.2028'))).toEqual(['2028-02-29']);
    expect(findDates('29.02.2027')).toEqual([]);
  });

  it('gives positions in the text', () => {
    const text = 'Due on 23.11.2026.';
    const [date] = findDates(text, 3);
    expect(date).toMatchObject({ kind: 'date', value: '23.11.2026', page: 3, start: 7, end: 17 });
    expect(text.slice(date.start, date.end)).toBe(date.value);
  });
});

describe('amounts', () => {
  it('reads European, US and plain notations with the currency before or after', () => {
    const fields = findAmounts('€ 1.234,56 | $1,234.56 | 1234.56 EUR | CHF 99.50 | 12,5 € | £7 | 1 234,56 EUR | 1\u2019000 USD');
    expect(fields.map((f) => [f.normalized, f.currency])).toEqual([
      ['1234.56', 'EUR'],
      ['1234.56', 'USD'],
      ['1234.56', 'EUR'],
      ['99.50', 'CHF'],
      ['12.5', 'EUR'],
      ['7', 'GBP'],
      ['1234.56', 'EUR'],
      ['1000', 'USD'],
    ]);
  });

  it('needs a currency: bare numbers are not amounts', () => {
    expect(findAmounts('Order 4711, quantity 3, total 1234.56')).toEqual([]);
  });

  it('normalises separators by their position', () => {
    expect(normalizeAmount('1.234')).toBe('1234');
    expect(normalizeAmount('1,234')).toBe('1234');
    expect(normalizeAmount('1,5')).toBe('1.5');
    expect(normalizeAmount('1.234.567,89')).toBe('1234567.89');
    expect(normalizeAmount('1,234,567.89')).toBe('1234567.89');
    expect(normalizeAmount("1'234.50")).toBe('1234.50');
    expect(normalizeAmount('007')).toBe('7');
  });

  it('positions cover the currency and the number', () => {
    const text = 'Total due: EUR 1.234,56 now';
    const [amount] = findAmounts(text);
    expect(text.slice(amount.start, amount.end)).toBe('EUR 1.234,56');
  });
});

describe('invoice numbers', () => {
  it('finds "Invoice No./Nr./#/Number" and German and French forms', () => {
    expect(normalized(findInvoiceNumbers('Invoice No. INV-2026-0042'))).toEqual(['INV-2026-0042']);
    expect(normalized(findInvoiceNumbers('Invoice #4711'))).toEqual(['4711']);
    expect(normalized(findInvoiceNumbers('INVOICE NUMBER: 2026/118'))).toEqual(['2026/118']);
    expect(normalized(findInvoiceNumbers('Rechnungsnummer: RE-77'))).toEqual(['RE-77']);
    expect(normalized(findInvoiceNumbers('Rechnung Nr. 12345'))).toEqual(['12345']);
    expect(normalized(findInvoiceNumbers('Facture n° F2026-9'))).toEqual(['F2026-9']);
  });

  it('skips words without digits and dates after "Invoice"', () => {
    expect(findInvoiceNumbers('Invoice date: 23.11.2026')).toEqual([]);
    expect(findInvoiceNumbers('Invoice attached for the services')).toEqual([]);
  });

  it('positions point at the number itself', () => {
    const text = 'See Invoice No. INV-9 below';
    const [field] = findInvoiceNumbers(text);
    expect(text.slice(field.start, field.end)).toBe('INV-9');
  });
});

describe('emails and IBANs', () => {
  it('finds emails, lower-cased', () => {
    expect(normalized(findEmails('Write to Billing@Acme.Example or jane.doe+docs@mail.example.org.'))).toEqual(['billing@acme.example', 'jane.doe+docs@mail.example.org']);
    expect(findEmails('not@an-address and @handle')).toEqual([]);
  });

  it('reports only IBANs that pass mod-97, written compact or grouped', () => {
    expect(isValidIban('DE89370400440532013000')).toBe(true);
    expect(isValidIban('DE89370400440532013001')).toBe(false);
    expect(isValidIban('GB82WEST12345698765432')).toBe(true);
    const fields = findIbans('Pay to DE89 3704 0044 0532 0130 00 or GB82WEST12345698765432, not DE89 3704 0044 0532 0130 01');
    expect(normalized(fields)).toEqual(['DE89370400440532013000', 'GB82WEST12345698765432']);
  });

  it('does not swallow a following capitalised word into a grouped IBAN', () => {
    const text = 'IBAN DE89 3704 0044 0532 0130 00 BIC COBADEFFXXX';
    const [iban] = findIbans(text);
    expect(iban.normalized).toBe('DE89370400440532013000');
    expect(text.slice(iban.start, iban.end)).toBe('DE89 3704 0044 0532 0130 00');
  });
});

describe('all key fields of a page', () => {
  it('are ordered by position', () => {
    const fields = findKeyFields('Invoice No. A-1\nDate 2026-11-23\nTotal € 10,00\nbilling@acme.example', 2);
    expect(fields.map((f) => f.kind)).toEqual(['invoice-number', 'date', 'amount', 'email']);
    expect(fields.every((f) => f.page === 2)).toBe(true);
  });
});

describe('HTML to text', () => {
  it('drops scripts, styles and comments, keeps blocks on lines and decodes entities', () => {
    const html = '<html><head><style>p{}</style><script>alert(1)</script></head><body><!-- hidden --><h1>Title</h1><p>A &amp; B&nbsp;&#8364;&#x20AC; caf&eacute; &unknown;</p><ul><li>one</li><li>two</li></ul></body></html>';
    expect(htmlToText(html)).toBe('Title\nA & B €€ café &unknown;\none\ntwo');
  });

  it('decodes numeric references safely', () => {
    expect(decodeEntities('&#0;&#xD800;&#1114112;&#65;')).toBe('\uFFFD\uFFFD\uFFFDA');
  });

  it('survives unclosed scripts and comments', () => {
    expect(htmlToText('<p>kept</p><script>never closed')).toBe('kept');
    expect(htmlToText('<p>kept</p><!-- never closed')).toBe('kept');
  });
});
