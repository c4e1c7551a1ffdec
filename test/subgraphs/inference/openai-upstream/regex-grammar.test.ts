import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EngineError } from '../../../../subgraphs/inference/engine/text-engine.js';
import { regexToGbnf } from '../../../../subgraphs/inference/engines/openai-upstream/regex-grammar.js';

// The translator emits one rule built only of literals, classes, groups, alternation and
// quantifiers, whose escapes (\xHH, \uHHHH) JavaScript reads alike: read it back as a RegExp to
// compare the two languages. Spaces separate items, except inside a literal or a class.
function grammarAsRegExp(grammar: string): RegExp {
  const rule = grammar.replace(/^root ::= /, '');
  let out = '';
  let quoted = false;
  let inClass = false;
  for (let i = 0; i < rule.length; i++) {
    const char = rule[i];
    if (char === '\\') {
      out += char + rule[++i];
      continue;
    }
    if (!inClass && char === '"') {
      quoted = !quoted;
      continue;
    }
    if (quoted) {
      // Literal letters, digits and spaces only come unescaped.
      out += char;
      continue;
    }
    if (char === '[') inClass = true;
    if (char === ']') inClass = false;
    if (char === ' ' && !inClass) continue;
    out += char;
  }
  return new RegExp(`^(?:${out})$`);
}

const PATTERNS = [
  '^\\d{3}-[a-z]+$',
  '[A-Z][a-z]*( [A-Z][a-z]*)*',
  '(cat|dog|bird)s?',
  '\\w+@\\w+\\.com',
  '-?\\d+(\\.\\d{1,2})?',
  '[^\\s,]+(, [^\\s,]+)*',
  'a.c',
  '(?:ab|cd){2,3}x*?',
  '(?<year>\\d{4})-(0[1-9]|1[0-2])',
  '[\\]\\-^"\\\\]+',
  '\\x41\\u00e9[\\x30-\\x39]',
  '',
  'yes|no|',
  '[-a]b[a-]',
  'tab\\there\\nnew "quoted" \\\\ back',
];

describe('regexToGbnf', () => {
  it('writes the grammars llama.cpp reads, letters and digits as they are and the rest escaped', () => {
    expect(regexToGbnf('^\\d{3}-[a-z]+$')).toBe('root ::= [0-9]{3} "\\x2d" [a-z]+');
    expect(regexToGbnf('(cat|dog)s?')).toBe('root ::= ("c" "a" "t" | "d" "o" "g") "s"?');
    expect(regexToGbnf('a.b')).toBe('root ::= "a" [^\\x0a] "b"');
    expect(regexToGbnf('\\S+')).toBe('root ::= [^ \\x09\\x0a\\x0d\\x0c\\x0b]+');
    expect(regexToGbnf('')).toBe('root ::= ""');
  });

  it.each(PATTERNS)('matches exactly what /%s/ matches in full', (pattern) => {
    const original = new RegExp(`^(?:${pattern})$`);
    const translated = grammarAsRegExp(regexToGbnf(pattern));
    fc.assert(
      fc.property(fc.oneof(pattern === '' ? fc.constant('') : fc.stringMatching(original, { size: 'small' }), fc.string({ unit: fc.constantFrom(...'abcxyzABC019-_.,@ \n"\\]^é') })), (text) => {
        expect(translated.test(text)).toBe(original.test(text));
      }),
      { numRuns: 300 },
    );
  });

  it.each([
    ['(a)\\1', 'a backreference'],
    ['(?=a)a', 'lookaround'],
    ['(?<!a)b', 'lookaround'],
    ['\\bword\\b', 'a word boundary'],
    ['a^b', 'an anchor inside the pattern'],
    ['a$b', 'an anchor inside the pattern'],
    ['\\p{L}', 'a Unicode property'],
    ['[\\W]', '\\W inside a character class'],
  ])('refuses %s (%s) as an unsupported parameter', (pattern, feature) => {
    let error: unknown;
    try {
      regexToGbnf(pattern);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(EngineError);
    expect(error).toMatchObject({ reason: 'unsupported_parameter', param: 'guided_regex' });
    expect((error as Error).message).toContain(feature);
  });

  it('refuses a pattern that is no regular expression as an invalid request', () => {
    expect(() => regexToGbnf('(unclosed')).toThrow(expect.objectContaining({ reason: 'invalid_request', param: 'guided_regex' }));
    expect(() => regexToGbnf('a{3,1}')).toThrow(expect.objectContaining({ reason: 'invalid_request' }));
  });
});
