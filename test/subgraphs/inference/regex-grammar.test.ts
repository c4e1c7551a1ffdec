import fc from 'fast-check';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { choiceToGbnf, regexToGbnf } from '../../../subgraphs/inference/engine/regex-grammar.js';
import { EngineError } from '../../../subgraphs/inference/engine/text-engine.js';
import { ensurePipelineCheckGguf, PIPELINE_CHECK_MODEL } from '../../../subgraphs/inference/engines/llama/gguf-writer.js';
import { LlamaEngine } from '../../../subgraphs/inference/engines/llama/llama-engine.js';
import { collect } from './llama/collect.js';

function refusalOf(run: () => unknown): EngineError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(EngineError);
    return error as EngineError;
  }
  throw new Error('expected a refusal');
}

// The grammar is one rule of literals, classes, groups, alternation and quantifiers whose escapes
// (\xHH, \uHHHH, \n, \", \\) JavaScript reads alike: read it back as a RegExp to compare the two
// languages. Spaces separate items, except inside a literal or a class.
function grammarAsRegExp(grammar: string): RegExp {
  const rule = grammar.replace(/^root ::= /, '').replace(/\n$/, '');
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
      out += char.replace(/[.*+?^${}()|[\]\\/-]/, '\\$&');
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
  '[a\\-z]+',
  '[\\^x]+',
  '\\x41\\u00e9[\\x30-\\x39]',
  '',
  'yes|no|',
  '[-a]b[a-]',
  'tab\\there\\nnew "quoted" \\\\ back',
  '(?:a+)*b',
  '\\S+\\s\\D\\W',
  'a{2}b{1,}c{0,2}?',
  '[^a-c\\d]+.?',
  'x\\.y\\*z\\+\\?\\(\\)\\[\\]\\{\\}\\|\\/\\$\\^',
];

describe('guided_regex to GBNF', () => {
  it('writes literals whole and readable, classes with ] [ \\ - ^ and anything unprintable as hex escapes', () => {
    expect(regexToGbnf('^\\d{3}-[a-z]+$')).toBe('root ::= [0-9]{3} "-" [a-z]+\n');
    expect(regexToGbnf('(cat|dog)s?')).toBe('root ::= ("cat" | "dog") "s"?\n');
    expect(regexToGbnf('a"b\\\\c')).toBe('root ::= "a\\"b\\\\c"\n');
    expect(regexToGbnf('[a\\-z]')).toBe('root ::= [a\\x2dz]\n');
    expect(regexToGbnf('[\\^x\\]\\[\\\\]')).toBe('root ::= [\\x5ex\\x5d\\x5b\\x5c]\n');
    expect(regexToGbnf('[a-c\\d_]+')).toBe('root ::= [0-9a-c_]+\n');
    expect(regexToGbnf('^(?:x|yz){2,3}$')).toBe('root ::= ("x" | "yz"){2,3}\n');
    expect(regexToGbnf('a.b')).toBe('root ::= "a" [^\\x0a\\x0d\\u2028-\\u2029] "b"\n');
    expect(regexToGbnf('é\\t\\x01')).toBe('root ::= "\\xe9\\t\\x01"\n');
    expect(regexToGbnf('(?:a+)*')).toBe('root ::= ("a"+)*\n');
    expect(regexToGbnf('')).toBe('root ::= ""\n');
  });

  it.each(PATTERNS)('matches exactly what /%s/ matches in full', (pattern) => {
    const original = new RegExp(`^(?:${pattern})$`);
    const translated = grammarAsRegExp(regexToGbnf(pattern));
    fc.assert(
      fc.property(
        fc.oneof(pattern === '' ? fc.constant('') : fc.stringMatching(original, { size: 'small' }), fc.string({ unit: fc.constantFrom(...'abcxyzABC019-_.,@ \n\t"\\]^é\u2028\u00a0') })),
        (text) => {
          expect(translated.test(text)).toBe(original.test(text));
        },
      ),
      { numRuns: 300 },
    );
  });

  it.each([
    ['(?=a)b', /lookaround/],
    ['(?<!a)b', /lookaround/],
    ['(?i)abc', /inline flags/],
    ['(a)\\1', /backreferences/],
    ['(?<n>a)\\k<n>', /backreferences/],
    ['a++', /possessive/],
    ['\\bword\\b', /word boundaries/],
    ['\\p{L}', /Unicode properties/],
    ['\\u{41}', /braced Unicode/],
    ['\\q', /escape \\q/],
    ['\\x4', /malformed \\x/],
    ['a**', /quantifier cannot follow/],
    ['*a', /nothing to repeat/],
    ['a{,3}', /not a \{m\}/],
    ['(ab', /unclosed group/],
    ['ab)', /unbalanced/],
    ['[abc', /unclosed character class/],
    ['[]a]', /first in the class/],
    ['[^]', /first in the class/],
    ['[z-a]', /reversed/],
    ['a{3,1}', /reversed/],
    ['a{2000}', /above 1000/],
    ['a^b', /anchors/],
    ['a$b', /anchors/],
    ['[[:alpha:]]', /POSIX/],
    ['[\\W]', /negated shorthands/],
    ['[a-\\d]', /shorthand/],
    ['a\\', /lone backslash/],
  ])('refuses %s as an invalid request naming guided_regex', (pattern, message) => {
    const error = refusalOf(() => regexToGbnf(pattern));
    expect([error.reason, error.param]).toEqual(['invalid_request', 'guided_regex']);
    expect(error.message).toMatch(message);
  });

  it('makes a grammar of the choices, escaped and without repeats, and refuses none or an empty one', () => {
    expect(choiceToGbnf(['a', 'say "hi"', 'a', 'x-y\n'])).toBe('root ::= "a" | "say \\"hi\\"" | "x-y\\n"\n');
    expect(refusalOf(() => choiceToGbnf([])).param).toBe('guided_choice');
    expect(refusalOf(() => choiceToGbnf(['x', ''])).param).toBe('guided_choice');
  });
});

describe('the grammars in the embedded llama engine', () => {
  let dir: string;
  let engine: LlamaEngine;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'regex-grammar-'));
    await ensurePipelineCheckGguf(dir);
    engine = new LlamaEngine({ modelsDir: dir, sequences: 1, threads: 1, contextSize: 256 });
    expect((await engine.settled()).map((model) => model.status)).toEqual(['ready']);
  }, 120_000);

  afterAll(async () => {
    await engine?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  // llama.cpp refuses \- and \^ as unknown escapes, which would fail the whole grammar.
  it.each(['[a\\-z]{2,4}', '[\\^x]{3}', '[\\]\\[\\\\"]{2}', '(yes|no|)!', '\\s\\S.\\u00e9'])('llama.cpp accepts the grammar of %s and the output matches', async (pattern) => {
    const answer = await collect(
      engine.generate({
        model: PIPELINE_CHECK_MODEL,
        input: { kind: 'completion', prompt: 'hello' },
        sampling: { maxTokens: 24, seed: 5 },
        guided: { kind: 'regex', pattern },
        signal: new AbortController().signal,
      }),
    );
    expect(answer.finishReason).toBe('stop');
    expect(answer.text).toMatch(new RegExp(`^(?:${pattern})$`));
  });
});
