import { EngineError } from './text-engine.js';
import { refuseRegex, RegexParser, type RegexNode } from './regex-parser.js';

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
