import { EngineError } from './text-engine.js';
import { refuseRegex, RegexParser, type ClassRange, type RegexNode } from './regex-parser.js';

/*
 * guided_regex and guided_choice as llama.cpp grammars (GBNF), for the embedded llama engine and
 * for a llama.cpp upstream. The whole output must match the pattern. The subset (JavaScript
 * syntax): literals; \n \r \t \f \v \0 \xHH \uHHHH and escaped punctuation; \d \w \s and \D \W \S;
 * classes [a-z0-9_] and [^...]; `.` (any character but a line break, as in JavaScript); groups
 * (...), (?:...) and (?<name>...); alternation |; the quantifiers ? * + {m} {m,} {m,n} (at most
 * 1000), lazy or not; ^ and $ at the ends. Everything else (lookaround, backreferences, \b,
 * possessive quantifiers, inline flags, POSIX classes, a ']' first in a class) is refused with
 * EngineError('invalid_request', …, 'guided_regex'): the client's value lies outside the subset.
 *
 * llama.cpp's grammar parser knows only the escapes \x \u \U \t \r \n \\ \" \[ \]; anything else
 * (\- or \^ in a class) is an "unknown escape" that fails the whole grammar. So every character
 * that is not printable ASCII, and inside a class every one of ] [ \ - ^, is written as \xHH,
 * \uHHHH or \UHHHHHHHH.
 */

function hexEscape(codePoint: number): string {
  if (codePoint <= 0xff) return `\\x${codePoint.toString(16).padStart(2, '0')}`;
  if (codePoint <= 0xffff) return `\\u${codePoint.toString(16).padStart(4, '0')}`;
  return `\\U${codePoint.toString(16).padStart(8, '0')}`;
}

function literalChar(codePoint: number): string {
  if (codePoint === 0x22) return '\\"';
  if (codePoint === 0x5c) return '\\\\';
  if (codePoint === 0x0a) return '\\n';
  if (codePoint === 0x0d) return '\\r';
  if (codePoint === 0x09) return '\\t';
  if (codePoint < 0x20 || codePoint > 0x7e) return hexEscape(codePoint);
  return String.fromCodePoint(codePoint);
}

function classChar(codePoint: number): string {
  if (codePoint < 0x20 || codePoint > 0x7e || codePoint === 0x5b || codePoint === 0x5c || codePoint === 0x5d || codePoint === 0x5e || codePoint === 0x2d) {
    return hexEscape(codePoint);
  }
  return String.fromCodePoint(codePoint);
}

/** A GBNF string literal that matches `text` exactly. */
export function gbnfLiteral(text: string): string {
  let out = '"';
  for (const char of text) out += literalChar(char.codePointAt(0)!);
  return `${out}"`;
}

// `atom`: the text is one GBNF item (a literal, a class or a parenthesized group) that a quantifier may follow.
interface Emitted {
  text: string;
  atom: boolean;
}

function emit(node: RegexNode): Emitted {
  switch (node.kind) {
    case 'literal':
      return { text: gbnfLiteral(node.text), atom: true };
    case 'class': {
      const body = node.items.map((item) => (item.from === item.to ? classChar(item.from) : `${classChar(item.from)}-${classChar(item.to)}`)).join('');
      return { text: `[${node.negated ? '^' : ''}${body}]`, atom: true };
    }
    case 'sequence': {
      // Adjacent literals become one GBNF literal, so "abc" stays readable.
      const parts: Emitted[] = [];
      let literal = '';
      for (const item of node.items) {
        if (item.kind === 'literal') literal += item.text;
        else {
          if (literal) parts.push({ text: gbnfLiteral(literal), atom: true });
          literal = '';
          parts.push(emit(item));
        }
      }
      if (literal) parts.push({ text: gbnfLiteral(literal), atom: true });
      if (parts.length === 0) return { text: '""', atom: true };
      if (parts.length === 1) return parts[0];
      return { text: `(${parts.map((part) => part.text).join(' ')})`, atom: true };
    }
    case 'alternation':
      return { text: `(${node.options.map((option) => emit(option).text).join(' | ')})`, atom: true };
    case 'repeat': {
      const inner = emit(node.item);
      const item = inner.atom ? inner.text : `(${inner.text})`;
      if (node.min === 0 && node.max === 1) return { text: `${item}?`, atom: false };
      if (node.min === 0 && node.max === null) return { text: `${item}*`, atom: false };
      if (node.min === 1 && node.max === null) return { text: `${item}+`, atom: false };
      if (node.min === node.max) return { text: `${item}{${node.min}}`, atom: false };
      return { text: `${item}{${node.min},${node.max ?? ''}}`, atom: false };
    }
  }
}

/** guided_regex as a GBNF grammar with rule `root`; a pattern outside the subset is refused as invalid_request naming guided_regex. */
export function regexToGbnf(pattern: string): string {
  const root = new RegexParser(pattern).parse();
  // The parser accepts only JavaScript syntax; this catches what it reads more loosely than JavaScript does.
  try {
    new RegExp(pattern);
  } catch (error) {
    refuseRegex(`not a valid regular expression (${(error as Error).message})`);
  }
  let text = emit(root).text;
  // One outer group around the whole rule says nothing.
  if (root.kind === 'alternation' || (root.kind === 'sequence' && text.startsWith('(') && text.endsWith(')'))) text = text.slice(1, -1);
  return `root ::= ${text}\n`;
}

/** A GBNF grammar whose only sentences are the given choices; none, or an empty one, is refused naming guided_choice. */
export function choiceToGbnf(choices: string[]): string {
  if (choices.length === 0) throw new EngineError('invalid_request', 'guided_choice needs at least one choice', 'guided_choice');
  if (choices.some((choice) => choice === '')) throw new EngineError('invalid_request', 'guided_choice cannot hold an empty choice', 'guided_choice');
  return `root ::= ${[...new Set(choices)].map(gbnfLiteral).join(' | ')}\n`;
}

// What a JSON string cannot hold raw: control characters, '"' and '\'.
const JSON_RAW_EXCLUDED: ClassRange[] = [
  { from: 0x00, to: 0x1f },
  { from: 0x22, to: 0x22 },
  { from: 0x5c, to: 0x5c },
];

function jsonEscaped(codePoint: number): RegexNode {
  return { kind: 'literal', text: JSON.stringify(String.fromCodePoint(codePoint)).slice(1, -1) };
}

function inRanges(codePoint: number, ranges: ClassRange[]): boolean {
  return ranges.some((range) => range.from <= codePoint && codePoint <= range.to);
}

/** The ranges without the code points JSON_RAW_EXCLUDED names. */
function withoutRawExcluded(ranges: ClassRange[]): ClassRange[] {
  const out: ClassRange[] = [];
  for (const range of ranges) {
    let from = range.from;
    for (const excluded of JSON_RAW_EXCLUDED) {
      if (excluded.to < from || excluded.from > range.to) continue;
      if (excluded.from > from) out.push({ from, to: excluded.from - 1 });
      from = Math.max(from, excluded.to + 1);
    }
    if (from <= range.to) out.push({ from, to: range.to });
  }
  return out;
}

/**
 * The regex over a JSON string's text rather than its value: a character a JSON string cannot hold
 * raw is written as its escape. A negated class (`.`, \W, [^a]) keeps '"' and '\' as escapes and
 * drops the control characters, so the answer is a subset of what the pattern allows.
 */
function asJsonText(node: RegexNode): RegexNode {
  switch (node.kind) {
    case 'literal':
      return { kind: 'literal', text: JSON.stringify(node.text).slice(1, -1) };
    case 'sequence':
      return { kind: 'sequence', items: node.items.map(asJsonText) };
    case 'alternation':
      return { kind: 'alternation', options: node.options.map(asJsonText) };
    case 'repeat':
      return { ...node, item: asJsonText(node.item) };
    case 'class': {
      const escapes: RegexNode[] = [];
      if (node.negated) {
        for (const codePoint of [0x22, 0x5c]) if (!inRanges(codePoint, node.items)) escapes.push(jsonEscaped(codePoint));
        const options: RegexNode[] = [{ kind: 'class', negated: true, items: [...node.items, ...JSON_RAW_EXCLUDED] }, ...escapes];
        return options.length === 1 ? options[0] : { kind: 'alternation', options };
      }
      for (const excluded of JSON_RAW_EXCLUDED) {
        for (let codePoint = excluded.from; codePoint <= excluded.to; codePoint++) if (inRanges(codePoint, node.items)) escapes.push(jsonEscaped(codePoint));
      }
      const kept = withoutRawExcluded(node.items);
      const options: RegexNode[] = kept.length > 0 ? [{ kind: 'class', negated: false, items: kept }, ...escapes] : escapes;
      return options.length === 1 ? options[0] : { kind: 'alternation', options };
    }
  }
}

/**
 * A JSON schema `pattern` as a GBNF expression for the whole JSON string, quotes included. The
 * string's value matches the pattern in full (JSON schema's pattern searches, so a full match
 * validates too); the pattern's subset and refusals are guided_regex's.
 */
export function patternToJsonStringGbnf(pattern: string): string {
  const root = new RegexParser(pattern).parse();
  try {
    new RegExp(pattern);
  } catch (error) {
    refuseRegex(`not a valid regular expression (${(error as Error).message})`);
  }
  return `"\\"" ${emit(asJsonText(root)).text} "\\""`;
}
