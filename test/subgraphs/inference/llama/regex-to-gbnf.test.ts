import { describe, expect, it } from 'vitest';
import { EngineError } from '../../../../subgraphs/inference/engine/text-engine.js';
import { choiceToGbnf, regexToGbnf } from '../../../../subgraphs/inference/engines/llama/regex-to-gbnf.js';

function refusalOf(run: () => unknown): EngineError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(EngineError);
    return error as EngineError;
  }
  throw new Error('expected a refusal');
}

describe('guided_regex to GBNF', () => {
  it.each([
    ['(?=a)b', /lookaround/],
    ['(?<!a)b', /lookaround/],
    ['(?<name>a)', /named groups/],
    ['(a)\\1', /escape \\1/],
    ['a*?', /lazy/],
    ['a++', /possessive/],
    ['\\bword', /escape \\b/],
    ['a**', /quantifier cannot follow/],
    ['*a', /nothing to repeat/],
    ['(ab', /unclosed group/],
    ['ab)', /unbalanced/],
    ['[abc', /unclosed character class/],
    ['[z-a]', /reversed/],
    ['a{3,1}', /reversed/],
    ['a{2000}', /above 1000/],
    ['a^b', /anchors/],
    ['[[:alpha:]]', /POSIX/],
    ['', /empty/],
  ])('refuses %s with invalid_request naming guided_regex', (pattern, message) => {
    const error = refusalOf(() => regexToGbnf(pattern));
    expect([error.reason, error.param]).toEqual(['invalid_request', 'guided_regex']);
    expect(error.message).toMatch(message);
  });

  it('writes literals with GBNF escapes and classes with their ranges', () => {
    expect(regexToGbnf('a"b\\\\c')).toBe('root ::= "a\\"b\\\\c"\n');
    expect(regexToGbnf('[a-c\\d_\\-]+')).toBe('root ::= [0-9a-c_\\-]+\n');
    expect(regexToGbnf('^(?:x|yz){2,3}$')).toBe('root ::= ("x" | "yz"){2,3}\n');
    expect(regexToGbnf('.?')).toBe('root ::= [^\\n\\r\u2028-\u2029]?\n');
  });

  it('makes a grammar of the choices, escaped, and refuses none or an empty one', () => {
    expect(choiceToGbnf(['a', 'say "hi"', 'a'])).toBe('root ::= "a" | "say \\"hi\\""\n');
    expect(refusalOf(() => choiceToGbnf([])).param).toBe('guided_choice');
    expect(refusalOf(() => choiceToGbnf(['x', ''])).param).toBe('guided_choice');
  });
});
