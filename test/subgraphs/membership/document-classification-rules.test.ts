import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../platform/config.js';
import { DocumentClassificationService } from '../../../subgraphs/membership/document-classification/document-classification.service.js';
import { documentClassifierFrom } from '../../../subgraphs/membership/document-classification/document-classifier.factory.js';
import { DocumentRuleKind } from '../../../subgraphs/membership/document-classification/document-rule-kind.js';
import { fuzzyMatches, regexMatches, regexProblem, ruleMatches, ruleProblem } from '../../../subgraphs/membership/document-classification/rule-matcher.js';

describe('the ReDoS guard, at write time', () => {
  it('refuses repeated groups holding a quantifier or an alternation, and back-references', () => {
    for (const pattern of ['(a+)+', '(a*)*$', '(\\w+\\s?)*', '((ab)+c)+', '(a+){2,}', '(?:x+y?)+', '(a|aa)+', '(?:jan|feb)*', '(x)\\1', '(?<w>a)\\k<w>']) {
      expect(regexProblem(pattern), pattern).not.toBeNull();
    }
  });

  it('accepts ordinary patterns', () => {
    for (const pattern of ['invoice\\s+#?\\d{4,}', '^(re|fwd):', '(ab){2}', '[a-z]+@[a-z]+\\.com', '\\(\\d+\\)+', '[(+)]+', '(?:inv|invoice) no\\.?', 'a{1}(b)+', '(?<year>\\d{4})-\\d\\d']) {
      expect(regexProblem(pattern), pattern).toBeNull();
    }
  });

  it('refuses what does not compile and what is too long', () => {
    expect(regexProblem('(unclosed')).toMatch(/not a valid regular expression/);
    expect(regexProblem('x'.repeat(201))).toMatch(/at most 200/);
    expect(ruleProblem({ kind: DocumentRuleKind.EXACT, pattern: 'x'.repeat(501) })).toMatch(/longer than 500/);
    expect(ruleProblem({ kind: DocumentRuleKind.FUZZY, pattern: 'a b', threshold: 0 })).toMatch(/above 0/);
  });
});

describe('the ReDoS guard, at run time', () => {
  it('stops a catastrophic pattern (had one been stored) within its time limit, as no match', () => {
    const started = Date.now();
    expect(regexMatches('(a+)+$', 'u', `${'a'.repeat(40)}b`, 50)).toBe(false);
    expect(Date.now() - started).toBeLessThan(1_000);
    // A polynomial one the static check lets through is stopped the same way.
    const slow = Date.now();
    expect(regexMatches('\\d+\\d+\\d+\\d+$', 'u', `${'1'.repeat(20_000)}x`, 50)).toBe(false);
    expect(Date.now() - slow).toBeLessThan(1_000);
    expect(regexMatches('invoice', 'iu', 'An INVOICE')).toBe(true);
  });
});

describe('matching', () => {
  it('ANY and ALL match whole words only, and honour case when asked', () => {
    expect(ruleMatches({ kind: DocumentRuleKind.ANY, pattern: 'tax' }, 'taxi fares')).toBe(false);
    expect(ruleMatches({ kind: DocumentRuleKind.ANY, pattern: 'tax' }, 'Income TAX.')).toBe(true);
    expect(ruleMatches({ kind: DocumentRuleKind.ANY, pattern: 'tax', caseSensitive: true }, 'Income TAX.')).toBe(false);
    expect(ruleMatches({ kind: DocumentRuleKind.ALL, pattern: 'c++ c#' }, 'knows c# and c++')).toBe(true);
  });

  it('fuzzy similarity is over windows of as many words as the phrase', () => {
    expect(fuzzyMatches('invoice number', 'lnvoice numbr 12', 0.8, true)).toBe(true);
    expect(fuzzyMatches('invoice number', 'the number', 0.8, true)).toBe(false);
    expect(fuzzyMatches('invoice', 'INVOICE', 1, false)).toBe(false);
    expect(fuzzyMatches('invoice', 'INVOICE', 1, true)).toBe(true);
  });
});

describe('settings', () => {
  const base = { NODE_ENV: 'test', DATA_DIR: '/tmp/platform-test-unused', INTERNAL_SECRET: 'x'.repeat(32) };

  it('zero-shot is off by default, the threshold 0.6', () => {
    expect(loadConfig(base).documentClassification).toEqual({ classifierThreshold: 0.6, zeroShot: null });
  });

  it('reads the zero-shot provider and the threshold from the environment', () => {
    const config = loadConfig({ ...base, DOCUMENT_ZERO_SHOT_URL: 'http://127.0.0.1:4000/inference/gateway/v1', DOCUMENT_ZERO_SHOT_MODEL: 'tiny', DOCUMENT_ZERO_SHOT_KEY: 'k', DOCUMENT_ZERO_SHOT_TIMEOUT_MS: '2500', DOCUMENT_CLASSIFIER_THRESHOLD: '0.75' });
    expect(config.documentClassification).toEqual({ classifierThreshold: 0.75, zeroShot: { baseUrl: 'http://127.0.0.1:4000/inference/gateway/v1', model: 'tiny', apiKey: 'k', timeoutMs: 2500 } });
    expect(documentClassifierFrom(config.documentClassification)).toBeInstanceOf(DocumentClassificationService);
  });

  it('refuses settings that cannot work', () => {
    expect(() => loadConfig({ ...base, DOCUMENT_CLASSIFIER_THRESHOLD: '1.5' })).toThrow(/DOCUMENT_CLASSIFIER_THRESHOLD/);
    expect(() => loadConfig({ ...base, DOCUMENT_ZERO_SHOT_URL: 'ftp://x', DOCUMENT_ZERO_SHOT_MODEL: 'm' })).toThrow(/DOCUMENT_ZERO_SHOT_URL/);
    expect(() => loadConfig({ ...base, DOCUMENT_ZERO_SHOT_URL: 'http://x/v1' })).toThrow(/DOCUMENT_ZERO_SHOT_MODEL/);
  });
});
