import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { boundedSchema } from '../../../../subgraphs/inference/engines/llama/json-schema-bounds.js';

/**
 * The bounds' GBNF read as a JavaScript regex (the subset these rules use: literals, classes,
 * groups, alternation, quantifiers), so that every decimal around the bounds can be checked: what
 * the rule admits must validate (ajv, parsed as JSON.parse reads it), and what validates in plain
 * decimal form must be admitted.
 */
function gbnfToRegExp(gbnf: string): RegExp {
  let out = '';
  let i = 0;
  const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const readEscape = (): string => {
    const kind = gbnf[i + 1];
    if (kind === 'x') return (i += 4), String.fromCodePoint(parseInt(gbnf.slice(i - 2, i), 16));
    if (kind === 'u') return (i += 6), String.fromCodePoint(parseInt(gbnf.slice(i - 4, i), 16));
    if (kind === 'U') return (i += 10), String.fromCodePoint(parseInt(gbnf.slice(i - 8, i), 16));
    i += 2;
    return ({ n: '\n', r: '\r', t: '\t' } as Record<string, string>)[kind] ?? kind;
  };
  const classChar = (char: string) => `\\u{${char.codePointAt(0)!.toString(16)}}`;
  while (i < gbnf.length) {
    const char = gbnf[i];
    if (char === ' ') i++;
    else if (char === '"') {
      i++;
      let literal = '';
      while (gbnf[i] !== '"') literal += gbnf[i] === '\\' ? readEscape() : gbnf[i++];
      i++;
      out += `(?:${escape(literal)})`;
    } else if (char === '[') {
      i++;
      out += '[';
      if (gbnf[i] === '^') (out += '^'), i++;
      while (gbnf[i] !== ']') {
        if (gbnf[i] === '-') {
          out += '-';
          i++;
          continue;
        }
        let member: string;
        if (gbnf[i] === '\\') member = readEscape();
        else {
          member = String.fromCodePoint(gbnf.codePointAt(i)!);
          i += member.length;
        }
        out += classChar(member);
      }
      i++;
      out += ']';
    } else if (char === '(') (out += '(?:'), i++;
    else if (char === '{') {
      const end = gbnf.indexOf('}', i);
      out += gbnf.slice(i, end + 1);
      i = end + 1;
    } else (out += char), i++;
  }
  return new RegExp(`^(?:${out})$`, 'u');
}

function ruleOf(schema: Record<string, unknown>): RegExp {
  const { schema: replaced, rules } = boundedSchema(schema);
  expect(rules, JSON.stringify(replaced)).toHaveLength(1);
  expect(replaced).toEqual({ const: rules[0]!.placeholder });
  return gbnfToRegExp(rules[0]!.gbnf);
}

/** Decimals around the bounds: integers, halves, long fractions, zero fractions, negative zero. */
function candidates(around: number[]): string[] {
  const out = new Set<string>(['0', '-0', '0.0', '-0.0', '0.5', '-0.5', '0.0000000000000001', '-0.0000000000000001', '00', '01', '1e2', '+1', '.5', '1.']);
  for (const bound of around) {
    for (let delta = -3; delta <= 3; delta++) {
      const n = bound + delta;
      for (const text of [`${n}`, `${n}.0`, `${n}.000`, `${n}.5`, `${n}.0001`, `${n}.9999999999999`, `${n}.99999999999999`, `${n}.9999999999999999`, `${n}.0000000000000001`]) {
        out.add(text);
        if (!text.startsWith('-')) out.add(`-${text}`);
      }
    }
  }
  return [...out];
}

const CASES: { schema: Record<string, unknown>; around: number[] }[] = [
  { schema: { type: 'integer', minimum: 3, maximum: 7 }, around: [3, 7] },
  { schema: { type: 'integer', minimum: -123456, maximum: -17 }, around: [-123456, -17, 0] },
  { schema: { type: 'integer', minimum: 0 }, around: [0, Number.MAX_SAFE_INTEGER - 3] },
  { schema: { type: 'integer', exclusiveMaximum: -1000 }, around: [-1000, -Number.MAX_SAFE_INTEGER + 3] },
  { schema: { type: 'integer', exclusiveMinimum: 2.5, maximum: 9.5 }, around: [2, 9] },
  { schema: { type: 'integer', minimum: -9007199254740991, maximum: 9007199254740991 }, around: [-9007199254740988, 0, 9007199254740988] },
  { schema: { type: 'number', minimum: 0, maximum: 1 }, around: [0, 1] },
  { schema: { type: 'number', exclusiveMinimum: -1, exclusiveMaximum: 1 }, around: [-1, 0, 1] },
  { schema: { type: 'number', minimum: 0, maximum: 100 }, around: [0, 100] },
  { schema: { type: 'number', exclusiveMinimum: 0, exclusiveMaximum: 100 }, around: [0, 100] },
  { schema: { type: 'number', exclusiveMinimum: 0 }, around: [0] },
  { schema: { type: 'number', maximum: -40 }, around: [-40] },
  { schema: { type: 'number', minimum: -5, exclusiveMaximum: 0 }, around: [-5, 0] },
  { schema: { type: 'number', minimum: 7, maximum: 7 }, around: [7] },
];

describe('guided_json bounds as GBNF', () => {
  it.each(CASES)('$schema admits exactly the plain decimals that validate', ({ schema, around }) => {
    const rule = ruleOf(schema);
    const validate = new Ajv().compile(schema);
    for (const text of candidates(around)) {
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch {
        expect(rule.test(text), `${text} is not JSON`).toBe(false);
        continue;
      }
      if (rule.test(text)) expect(validate(value), `${text} is admitted but does not validate`).toBe(true);
      // A plain decimal (an integer's without fraction) of up to 12 fractional digits that validates is
      // admitted: more may be cut next to an exclusive bound, which they could round onto.
      else if (validate(value) && /^-?\d+(\.\d{1,12})?$/.test(text) && !(schema.type === 'integer' && text.includes('.')) && !Object.is(value, -0)) {
        expect.fail(`${text} validates but is not admitted`);
      }
    }
  });

  it('a pattern is matched in full inside the JSON string, with what JSON escapes written as escapes', () => {
    const pattern = '^["\\\\a]{1,3}x.$';
    const rule = ruleOf({ type: 'string', pattern });
    const regex = new RegExp(pattern);
    for (const value of ['ax!', '"x!', '\\x"', 'a"\\x\\', 'aaax.', 'ax\n', 'ax', 'aaaax!', 'bx!', 'ax\t']) {
      const json = JSON.stringify(value);
      const admitted = rule.test(json);
      // Every admitted string matches; every match is admitted but a control character after '.' (dropped from negated classes).
      if (admitted) expect(regex.test(value), json).toBe(true);
      else expect(!regex.test(value) || /[\u0000-\u001f]/.test(value), json).toBe(true);
    }
    expect(rule.test('"ax\\\\"')).toBe(true);
    expect(rule.test('"ax\\""')).toBe(true);
  });

  it('leaves what it cannot express in place (refused by the engine, naming the keyword)', () => {
    for (const schema of [
      { type: 'number', minimum: 0.5 },
      { type: 'number', maximum: 1e300 },
      { type: 'integer', minimum: 10, maximum: 2 },
      { type: 'number', exclusiveMinimum: 0, exclusiveMaximum: 0 },
      { type: 'integer', minimum: 0, not: { const: 3 } },
      { type: 'string', pattern: 'a+', maxLength: 3 },
    ]) {
      const { schema: replaced, rules } = boundedSchema(schema);
      expect(rules, JSON.stringify(schema)).toHaveLength(0);
      expect(replaced).toEqual(schema);
    }
  });
});
