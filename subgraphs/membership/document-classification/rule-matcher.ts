import vm from 'node:vm';
import { distance } from 'fastest-levenshtein';
import { DocumentRuleKind } from './document-rule-kind.js';

export interface RuleSpec {
  kind: DocumentRuleKind;
  pattern: string;
  caseSensitive?: boolean | null;
  threshold?: number | null;
}

export const MAX_PATTERN_LENGTH = 500;
export const MAX_REGEX_LENGTH = 200;
export const DEFAULT_FUZZY_THRESHOLD = 0.8;
/** Rules read at most this much of a document: a bound on every rule's cost, a regex's included. */
export const MAX_MATCH_TEXT = 100_000;
/** One regex rule's run is stopped after this long and counts as no match (the second guard). */
export const REGEX_TIME_LIMIT_MS = 50;
/** A fuzzy phrase of more words than this is refused: each window costs a Levenshtein distance. */
const MAX_FUZZY_WORDS = 8;

/** Why a rule cannot be used (the parameter's reason for a 400), or null when it is sound. */
export function ruleProblem(rule: RuleSpec): string | null {
  const pattern = rule.pattern;
  if (!pattern.trim()) return 'the pattern is blank';
  if (pattern.length > MAX_PATTERN_LENGTH) return `the pattern is longer than ${MAX_PATTERN_LENGTH} characters`;
  if (rule.threshold != null && rule.kind !== DocumentRuleKind.FUZZY) return 'threshold is only for FUZZY rules';
  if (rule.threshold != null && !(rule.threshold > 0 && rule.threshold <= 1)) return 'threshold must be above 0 and at most 1';
  if (rule.kind === DocumentRuleKind.FUZZY && words(pattern).length > MAX_FUZZY_WORDS) return `a FUZZY phrase has at most ${MAX_FUZZY_WORDS} words`;
  if (rule.kind === DocumentRuleKind.REGEX) return regexProblem(pattern);
  return null;
}

/**
 * The ReDoS guard, first half: patterns that can backtrack exponentially are refused before they
 * are stored: a repeated group that itself holds a quantifier ((a+)+, (\w*x?)*) or an alternation
 * ((a|aa)+), and back-references. The second half is the run itself: each regex rule runs under a
 * V8 time limit (REGEX_TIME_LIMIT_MS), which also stops the polynomial cases (\d+\d+$) on a long text.
 */
export function regexProblem(pattern: string): string | null {
  if (pattern.length > MAX_REGEX_LENGTH) return `a regular expression has at most ${MAX_REGEX_LENGTH} characters`;
  try {
    new RegExp(pattern, 'u');
  } catch (error) {
    return `not a valid regular expression: ${(error as Error).message.replace(/^Invalid regular expression: /, '')}`;
  }
  if (/\\[1-9]|\\k</.test(pattern)) return 'back-references are not allowed';
  // Walk the pattern: a stack of open groups, each remembering whether it holds a quantifier or an alternation.
  const stack: { quantified: boolean; alternation: boolean }[] = [];
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const char = pattern[i];
    if (char === '\\') {
      i++;
      continue;
    }
    if (inClass) {
      if (char === ']') inClass = false;
      continue;
    }
    if (char === '[') {
      inClass = true;
      continue;
    }
    if (char === '(') {
      stack.push({ quantified: false, alternation: false });
      // (?: (?= (?! (?<= (?<! (?<name>: the group's prefix is not a quantifier.
      if (pattern[i + 1] === '?') i++;
      continue;
    }
    if (char === '|') {
      if (stack.length) stack[stack.length - 1].alternation = true;
      continue;
    }
    if (char === ')') {
      const group = stack.pop() ?? { quantified: false, alternation: false };
      const next = quantifierAt(pattern, i + 1);
      if (next?.repeats && group.quantified) return 'nested quantifiers (a repeated group holding a quantifier) are not allowed';
      if (next?.repeats && group.alternation) return 'a repeated group holding an alternation is not allowed';
      // What the group holds, and its own repetition, count for the enclosing group.
      if (stack.length && (group.quantified || next?.repeats)) stack[stack.length - 1].quantified = true;
      if (next) {
        i += next.length;
        if (pattern[i + 1] === '?') i++;
      }
      continue;
    }
    const quantifier = quantifierAt(pattern, i);
    if (quantifier) {
      if (quantifier.repeats && stack.length) stack[stack.length - 1].quantified = true;
      i += quantifier.length - 1;
      // A lazy suffix (?) belongs to this quantifier.
      if (pattern[i + 1] === '?') i++;
    }
  }
  return null;
}

/** A quantifier starting at `at`: its length, and whether it repeats (more than once). */
function quantifierAt(pattern: string, at: number): { length: number; repeats: boolean } | null {
  const char = pattern[at];
  if (char === '*' || char === '+') return { length: 1, repeats: true };
  if (char === '?') return { length: 1, repeats: false };
  if (char === '{') {
    const match = /^\{(\d+)(,(\d*))?\}/.exec(pattern.slice(at));
    if (!match) return null;
    const max = match[2] === undefined ? Number(match[1]) : match[3] === '' ? Infinity : Number(match[3]);
    return { length: match[0].length, repeats: max > 1 };
  }
  return null;
}

function words(text: string): string[] {
  return text.split(/[^\p{L}\p{N}]+/u).filter(Boolean);
}

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Whether the word occurs whole (not inside a longer word) in the text. */
function hasWord(text: string, word: string, flags: string): boolean {
  return new RegExp(`(?<![\\p{L}\\p{N}])${escapeRegex(word)}(?![\\p{L}\\p{N}])`, flags).test(text);
}

/** Whether one rule matches the text (which callers cap at MAX_MATCH_TEXT). */
export function ruleMatches(rule: RuleSpec, text: string): boolean {
  const flags = rule.caseSensitive ? 'u' : 'iu';
  switch (rule.kind) {
    case DocumentRuleKind.ANY:
      return rule.pattern.split(/\s+/).filter(Boolean).some((word) => hasWord(text, word, flags));
    case DocumentRuleKind.ALL:
      return rule.pattern.split(/\s+/).filter(Boolean).every((word) => hasWord(text, word, flags));
    case DocumentRuleKind.EXACT: {
      const phrase = rule.pattern.trim().split(/\s+/).map(escapeRegex).join('\\s+');
      return new RegExp(phrase, flags).test(text);
    }
    case DocumentRuleKind.REGEX:
      return regexMatches(rule.pattern, flags, text);
    case DocumentRuleKind.FUZZY:
      return fuzzyMatches(rule.pattern, text, rule.threshold ?? DEFAULT_FUZZY_THRESHOLD, !rule.caseSensitive);
    default:
      return false;
  }
}

// One context for every timed regex run: making a context costs far more than a run.
const REGEX_CONTEXT = vm.createContext({});
const REGEX_RUN = new vm.Script('pattern.test(text)');

/** The regex's test under a time limit: a run V8 stops, or a pattern that no longer compiles, is no match. */
export function regexMatches(pattern: string, flags: string, text: string, timeoutMs = REGEX_TIME_LIMIT_MS): boolean {
  let compiled: RegExp;
  try {
    compiled = new RegExp(pattern, flags);
  } catch {
    return false;
  }
  REGEX_CONTEXT.pattern = compiled;
  REGEX_CONTEXT.text = text;
  try {
    return REGEX_RUN.runInContext(REGEX_CONTEXT, { timeout: timeoutMs }) === true;
  } catch {
    return false;
  } finally {
    REGEX_CONTEXT.pattern = undefined;
    REGEX_CONTEXT.text = undefined;
  }
}

/**
 * Fuzzy: slide a window of as many words as the phrase over the text, and match when one
 * window's similarity (1 - Levenshtein distance / the longer length) reaches the threshold.
 * Catches OCR slips and spelling variants ("lnvoice", "recieved") that exact rules miss.
 */
export function fuzzyMatches(phrase: string, text: string, threshold: number, ignoreCase: boolean): boolean {
  const normalize = (s: string) => (ignoreCase ? s.toLowerCase() : s);
  const target = words(normalize(phrase));
  if (target.length === 0) return false;
  const joined = target.join(' ');
  const tokens = words(normalize(text));
  for (let i = 0; i + target.length <= tokens.length; i++) {
    const window = tokens.slice(i, i + target.length).join(' ');
    // Lengths too far apart cannot reach the threshold: skip the distance.
    const longer = Math.max(window.length, joined.length);
    if (1 - Math.abs(window.length - joined.length) / longer < threshold) continue;
    if (1 - distance(window, joined) / longer >= threshold) return true;
  }
  return false;
}
