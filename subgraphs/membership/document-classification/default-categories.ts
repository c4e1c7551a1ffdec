import { DocumentRuleKind } from './document-rule-kind.js';

interface DefaultRule {
  kind: DocumentRuleKind;
  pattern: string;
  caseSensitive?: boolean;
}

/**
 * The categories a new account starts with, each with rules that file the obvious cases on day
 * one, before any classifier is trained (Paperless-ngx ships none and answers nothing until it
 * learns; an invoice that says "Invoice" should not wait for that). Several rules per category:
 * the category with most matching rules wins, so an invoice that also says "Kind regards" is still
 * an invoice. English with the common German, French, Spanish and Italian words; ordinary rules,
 * edited or removed like any other (`PUT /documents/categories/{id}`).
 */
export const DEFAULT_CATEGORY_RULES: Readonly<Record<string, readonly DefaultRule[]>> = {
  invoice: [
    { kind: DocumentRuleKind.ANY, pattern: 'invoice rechnung facture factura fattura' },
    { kind: DocumentRuleKind.REGEX, pattern: '\\b(invoice|bill)\\s*(no\\b|number|#|date)' },
    { kind: DocumentRuleKind.REGEX, pattern: '\\b(amount|balance|total)\\s+due\\b|\\bdue\\s+date\\b|\\bpayment\\s+terms\\b|\\bf(ä|ae)llig' },
  ],
  receipt: [
    { kind: DocumentRuleKind.ANY, pattern: 'receipt quittung kassenbon reçu recibo ricevuta' },
    { kind: DocumentRuleKind.REGEX, pattern: '\\b(amount\\s+paid|paid\\s+in\\s+full|payment\\s+received|thank\\s+you\\s+for\\s+your\\s+(purchase|payment))\\b' },
    { kind: DocumentRuleKind.REGEX, pattern: '\\b(cash\\s+tendered|change\\s+due|card\\s+ending\\s+in|auth(orization)?\\s+code)\\b' },
  ],
  contract: [
    { kind: DocumentRuleKind.ANY, pattern: 'agreement contract vertrag contrat contrato contratto' },
    { kind: DocumentRuleKind.REGEX, pattern: '\\b(this\\s+agreement|the\\s+parties|hereinafter|in\\s+witness\\s+whereof|governing\\s+law)\\b' },
    { kind: DocumentRuleKind.REGEX, pattern: '\\b(signed\\s+by|signature|effective\\s+date|term\\s+of\\s+this)\\b' },
  ],
  resume: [
    { kind: DocumentRuleKind.ANY, pattern: 'resume résumé cv lebenslauf' },
    { kind: DocumentRuleKind.EXACT, pattern: 'curriculum vitae' },
    { kind: DocumentRuleKind.REGEX, pattern: '\\b(work|professional)\\s+experience\\b|\\bemployment\\s+history\\b' },
    { kind: DocumentRuleKind.REGEX, pattern: '\\b(education|qualifications)\\b[\\s\\S]{0,2000}\\bskills\\b' },
  ],
  'identity document': [
    { kind: DocumentRuleKind.ANY, pattern: 'passport reisepass personalausweis passeport pasaporte passaporto' },
    { kind: DocumentRuleKind.REGEX, pattern: '\\b(identity|id)\\s+card\\b|\\bdriv(ing|er\'?s)\\s+licen[cs]e\\b' },
    { kind: DocumentRuleKind.REGEX, pattern: '\\b(date\\s+of\\s+birth|place\\s+of\\s+birth|nationality|date\\s+of\\s+expiry)\\b' },
    // The machine-readable zone of a passport (ICAO 9303): "P<" and the issuing state.
    { kind: DocumentRuleKind.REGEX, pattern: 'P<[A-Z]{3}[A-Z<]{5,}', caseSensitive: true },
  ],
  letter: [
    { kind: DocumentRuleKind.REGEX, pattern: '(^|\\n)\\s*(dear|sehr\\s+geehrte|cher|chère|estimad[oa])\\b' },
    { kind: DocumentRuleKind.REGEX, pattern: '\\b(yours\\s+(sincerely|faithfully|truly)|kind\\s+regards|best\\s+regards|mit\\s+freundlichen\\s+gr(ü|ue)(ß|ss)en)\\b' },
  ],
  report: [
    { kind: DocumentRuleKind.ANY, pattern: 'report bericht rapport informe' },
    { kind: DocumentRuleKind.REGEX, pattern: '\\b(executive\\s+summary|key\\s+findings|methodology|table\\s+of\\s+contents)\\b' },
    { kind: DocumentRuleKind.REGEX, pattern: '\\b(conclusions?|recommendations)\\b' },
  ],
  other: [],
};
