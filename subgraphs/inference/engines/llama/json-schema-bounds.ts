import { randomBytes } from 'node:crypto';
import toRegexRange from 'to-regex-range';
import { EngineError } from '../../engine/text-engine.js';
import { gbnfLiteral, patternToJsonStringGbnf, regexToGbnf } from '../../engine/regex-grammar.js';

/*
 * guided_json keywords node-llama-cpp's JSON-schema grammar drops (minimum/maximum and their
 * exclusive forms, pattern), enforced by GBNF of our own: such a schema node is replaced by a
 * placeholder const string, node-llama-cpp writes the rest of the grammar, and the worker puts
 * the rule in the placeholder literal's place (llama-worker.ts spliceRules). A placeholder holds a random nonce, so
 * no const of the client's can be taken for one.
 */

/** A GBNF expression that stands where node-llama-cpp's grammar has the placeholder's literal. */
export interface GrammarRule {
  placeholder: string;
  gbnf: string;
}

export interface BoundedSchema {
  schema: unknown;
  rules: GrammarRule[];
}

// The integers a JSON number carries exactly; a one-sided bound takes the other side from here.
const SAFE = Number.MAX_SAFE_INTEGER;
// With multipleOf a range is enforced as the list of its values (a grammar alternative each), up to this many.
const MAX_ENUMERATED_INTEGERS = 1024;
const BOUNDS = ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum'];
// A fractional part's digits, as node-llama-cpp's number rule allows.
const FRACTION_DIGITS = 16;
// Keywords that constrain nothing, dropped with the node a rule replaces.
const ANNOTATIONS = ['description', 'title', '$schema', '$id', '$comment', 'default', 'examples', 'deprecated', 'readOnly', 'writeOnly'];

/** Whether the node holds only these keywords and annotations: a rule replacing it drops nothing that constrains. */
function only(record: Record<string, unknown>, keywords: string[]): boolean {
  return Object.keys(record).every((keyword) => keywords.includes(keyword) || ANNOTATIONS.includes(keyword));
}

interface Bound {
  value: number;
  exclusive: boolean;
}

/**
 * The schema with its bounded integers and numbers and its string patterns as placeholders and
 * their rules, anyOf written as the grammar's oneOf. What cannot be expressed is left in place, and
 * the engine refuses it naming the keyword.
 */
export function boundedSchema(schema: unknown): BoundedSchema {
  const nonce = randomBytes(6).toString('hex');
  const rules: GrammarRule[] = [];
  const rule = (gbnf: string) => {
    const placeholder = `guided-${nonce}-${rules.length}`;
    rules.push({ placeholder, gbnf });
    return { const: placeholder };
  };
  const walk = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(walk);
    if (typeof node !== 'object' || node === null) return node;
    const record = node as Record<string, unknown>;
    const out: Record<string, unknown> = {};
    for (const [keyword, value] of Object.entries(record)) {
      const nested = keyword === 'properties' || keyword === '$defs'
        ? Object.fromEntries(Object.entries((value ?? {}) as Record<string, unknown>).map(([name, child]) => [name, walk(child)]))
        : ['items', 'additionalProperties', 'oneOf', 'anyOf', 'prefixItems'].includes(keyword) ? walk(value) : value;
      // The grammar's oneOf is an alternation (any one branch matches), which is exactly anyOf.
      out[keyword === 'anyOf' && record.oneOf === undefined ? 'oneOf' : keyword] = nested;
    }
    if (record.enum !== undefined || record.const !== undefined) return out;
    if (record.type === 'integer' && record.multipleOf !== undefined) {
      const values = enumeratedIntegers(record);
      if (!values) return out;
      for (const keyword of [...BOUNDS, 'multipleOf', 'type']) delete out[keyword];
      return { ...out, enum: values };
    }
    if ((record.type === 'integer' || record.type === 'number') && BOUNDS.some((keyword) => record[keyword] !== undefined) && only(record, ['type', ...BOUNDS])) {
      const gbnf = rangeGbnf(record, record.type === 'integer');
      return gbnf === undefined ? out : rule(gbnf);
    }
    if (record.type === 'string' && typeof record.pattern === 'string') {
      // A pattern beside a length or a format would need the two intersected: left, and refused naming the keyword.
      if (!only(record, ['type', 'pattern'])) return out;
      try {
        return rule(patternToJsonStringGbnf(record.pattern));
      } catch (error) {
        if (error instanceof EngineError) throw new EngineError('unsupported_parameter', `guided_json "pattern" ${error.message.replace(/^guided_regex: /, '')}`, 'guided_json');
        throw error;
      }
    }
    return out;
  };
  return { schema: walk(schema), rules };
}

function finite(record: Record<string, unknown>, keyword: string): number | undefined {
  const value = record[keyword];
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

/** The tighter of the inclusive and the exclusive bound on one side; undefined when a given bound is not a number. */
function side(record: Record<string, unknown>, inclusive: string, exclusive: string, lower: boolean): Bound | null | undefined {
  const bounds: Bound[] = [];
  for (const [keyword, isExclusive] of [[inclusive, false], [exclusive, true]] as const) {
    if (record[keyword] === undefined) continue;
    const value = finite(record, keyword);
    if (value === undefined) return undefined;
    bounds.push({ value, exclusive: isExclusive });
  }
  if (bounds.length === 0) return null;
  // The tighter one; at a tie the exclusive one.
  return bounds.reduce((a, b) => (a.value === b.value ? (a.exclusive ? a : b) : (lower ? a.value > b.value : a.value < b.value) ? a : b));
}

function enumeratedIntegers(record: Record<string, unknown>): number[] | undefined {
  const low = side(record, 'minimum', 'exclusiveMinimum', true);
  const high = side(record, 'maximum', 'exclusiveMaximum', false);
  const step = finite(record, 'multipleOf');
  if (!low || !high || step === undefined || step <= 0) return undefined;
  const from = low.exclusive ? Math.floor(low.value) + 1 : Math.ceil(low.value);
  const to = high.exclusive ? Math.ceil(high.value) - 1 : Math.floor(high.value);
  if (to - from + 1 > MAX_ENUMERATED_INTEGERS * Math.max(step, 1)) return undefined;
  const values: number[] = [];
  for (let value = from; value <= to; value++) if (Number.isInteger(value / step)) values.push(value);
  // An empty range has no answer at all: left as it is, it is refused naming the keyword.
  return values.length > 0 && values.length <= MAX_ENUMERATED_INTEGERS ? values : undefined;
}

/** The integers from `from` to `to` (no leading zeros, no "-0") as a GBNF expression. */
function integersGbnf(from: number, to: number): string {
  return regexToGbnf(toRegexRange(from, to)).replace(/^root ::= /, '').trimEnd();
}

function digits(value: number): number {
  return String(Math.abs(value)).length;
}

/**
 * The range's GBNF, or undefined when it holds no value or cannot be expressed (a number bound
 * that is not a whole number): the bound is then left in the schema and refused. A missing side is
 * ±(2^53 − 1). Numbers are written without exponent, at most 16 fractional digits.
 */
function rangeGbnf(record: Record<string, unknown>, integer: boolean): string | undefined {
  const low = side(record, 'minimum', 'exclusiveMinimum', true);
  const high = side(record, 'maximum', 'exclusiveMaximum', false);
  if (low === undefined || high === undefined) return undefined;
  const lower: Bound = low ?? { value: -SAFE, exclusive: false };
  const upper: Bound = high ?? { value: SAFE, exclusive: false };
  if (integer) {
    const from = Math.max(-SAFE, lower.exclusive ? Math.floor(lower.value) + 1 : Math.ceil(lower.value));
    const to = Math.min(SAFE, upper.exclusive ? Math.ceil(upper.value) - 1 : Math.floor(upper.value));
    return from <= to ? integersGbnf(from, to) : undefined;
  }
  if (!Number.isInteger(lower.value) || !Number.isInteger(upper.value) || Math.abs(lower.value) > SAFE || Math.abs(upper.value) > SAFE) return undefined;
  const branches: string[] = [];
  // Non-negative numbers, written as digits; negative ones as "-" and their magnitude.
  if (upper.value > 0 || (upper.value === 0 && !upper.exclusive)) {
    const magnitude = magnitudeGbnf(lower.value >= 0 ? lower : { value: 0, exclusive: false }, upper);
    if (magnitude) branches.push(magnitude);
  }
  if (lower.value < 0) {
    const from: Bound = upper.value <= 0 ? { value: -upper.value, exclusive: upper.exclusive } : { value: 0, exclusive: false };
    const magnitude = magnitudeGbnf(from, { value: -lower.value, exclusive: lower.exclusive });
    if (magnitude) branches.push(`"-" (${magnitude})`);
  }
  return branches.length > 0 ? branches.join(' | ') : undefined;
}

/**
 * Decimals from `low` to `high` (both ≥ 0) as GBNF. Next to an exclusive bound the fraction keeps
 * the decimal within 15 significant digits, which a double holds apart from the bound: more digits
 * (99.9999999999999999 for < 100) would parse as the bound itself.
 */
function magnitudeGbnf(low: Bound, high: Bound): string | undefined {
  const cap = Math.min(FRACTION_DIGITS, low.exclusive ? 15 - digits(low.value) : FRACTION_DIGITS, high.exclusive ? 15 - digits(high.value) : FRACTION_DIGITS);
  const any = cap >= 1 ? ` ("." [0-9]{1,${cap}})?` : '';
  const zero = ' ("." "0"{1,16})?';
  const parts: string[] = [];
  if (low.value === high.value) {
    if (!low.exclusive && !high.exclusive) parts.push(`${gbnfLiteral(String(low.value))}${zero}`);
  } else {
    if (!low.exclusive) parts.push(`${gbnfLiteral(String(low.value))}${any}`);
    else if (cap >= 1) parts.push(`${gbnfLiteral(String(low.value))} "." [0-9]{0,${cap - 1}} [1-9]`);
    if (low.value + 1 <= high.value - 1) parts.push(`(${integersGbnf(low.value + 1, high.value - 1)})${any}`);
    if (!high.exclusive) parts.push(`${gbnfLiteral(String(high.value))}${zero}`);
  }
  return parts.length > 0 ? parts.join(' | ') : undefined;
}
