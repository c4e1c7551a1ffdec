import { EngineError } from '../../engine/text-engine.js';
import { refuse, RegexParser, type RegexNode } from './regex-parser.js';

/**
 * guided_regex as a llama.cpp grammar (GBNF). The whole output must match the pattern. The subset:
 * literals and escaped metacharacters, \n \r \t, \d \w \s (and \D \W \S), character classes
 * [a-z0-9_] and [^...], `.` (any character but a line break, as in JavaScript), groups (...) and (?:...),
 * alternation |, the quantifiers ? * + {m} {m,} {m,n}, and ^ / $ at the ends (implied anyway).
 * Anything else (lookaround, backreferences, lazy quantifiers, \b, named groups, flags) is refused.
 */

function literalChar(codePoint: number): string {
  if (codePoint === 0x22) return '\\"';
  if (codePoint === 0x5c) return '\\\\';
  if (codePoint === 0x0a) return '\\n';
  if (codePoint === 0x0d) return '\\r';
  if (codePoint === 0x09) return '\\t';
  if (codePoint < 0x20 || codePoint === 0x7f) return `\\x${codePoint.toString(16).padStart(2, '0')}`;
  return String.fromCodePoint(codePoint);
}

function classChar(codePoint: number): string {
  if (codePoint === 0x5d || codePoint === 0x5b || codePoint === 0x5e || codePoint === 0x2d || codePoint === 0x5c) return `\\${String.fromCodePoint(codePoint)}`;
  if (codePoint === 0x0a) return '\\n';
  if (codePoint === 0x0d) return '\\r';
  if (codePoint === 0x09) return '\\t';
  if (codePoint < 0x20 || codePoint === 0x7f) return `\\x${codePoint.toString(16).padStart(2, '0')}`;
  return String.fromCodePoint(codePoint);
}

/** A GBNF string literal that matches `text` exactly. */
export function gbnfLiteral(text: string): string {
  let out = '"';
  for (const char of text) out += literalChar(char.codePointAt(0)!);
  return `${out}"`;
}

function emit(node: RegexNode): string {
  switch (node.kind) {
    case 'literal':
      return gbnfLiteral(node.text);
    case 'class': {
      if (node.items.length === 0) return node.negated ? '[^\\x00]' : refuse('an empty character class matches nothing');
      const body = node.items.map((item) => (item.from === item.to ? classChar(item.from) : `${classChar(item.from)}-${classChar(item.to)}`)).join('');
      return `[${node.negated ? '^' : ''}${body}]`;
    }
    case 'sequence': {
      // Merge adjacent literals so "abc" stays one GBNF literal.
      const parts: string[] = [];
      let literal = '';
      for (const item of node.items) {
        if (item.kind === 'literal') literal += item.text;
        else {
          if (literal) parts.push(gbnfLiteral(literal));
          literal = '';
          parts.push(emit(item));
        }
      }
      if (literal) parts.push(gbnfLiteral(literal));
      return parts.length === 0 ? '""' : parts.length === 1 ? parts[0] : `(${parts.join(' ')})`;
    }
    case 'alternation':
      return `(${node.options.map(emit).join(' | ')})`;
    case 'repeat': {
      const inner = emit(node.item);
      const item = inner.startsWith('(') || inner.startsWith('[') || inner.startsWith('"') ? inner : `(${inner})`;
      if (node.min === 0 && node.max === 1) return `${item}?`;
      if (node.min === 0 && node.max === null) return `${item}*`;
      if (node.min === 1 && node.max === null) return `${item}+`;
      return `${item}{${node.min},${node.max ?? ''}}`;
    }
  }
}

/** Converts guided_regex to a GBNF grammar with rule `root`; refuses what lies outside the subset with EngineError('invalid_request', …, 'guided_regex'). */
export function regexToGbnf(pattern: string): string {
  if (pattern === '') refuse('the pattern is empty');
  return `root ::= ${emit(new RegexParser(pattern).parse())}\n`;
}

/** A GBNF grammar whose only sentences are the given choices. */
export function choiceToGbnf(choices: string[]): string {
  if (choices.length === 0) throw new EngineError('invalid_request', 'guided_choice needs at least one choice', 'guided_choice');
  if (choices.some((choice) => choice === '')) throw new EngineError('invalid_request', 'guided_choice cannot hold an empty choice', 'guided_choice');
  return `root ::= ${[...new Set(choices)].map(gbnfLiteral).join(' | ')}\n`;
}
