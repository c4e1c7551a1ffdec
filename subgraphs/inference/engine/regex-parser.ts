import { EngineError } from './text-engine.js';

/** The parsed guided_regex: what regex-grammar turns into GBNF. */
export type RegexNode =
  | { kind: 'literal'; text: string }
  | { kind: 'class'; negated: boolean; items: ClassRange[] }
  | { kind: 'sequence'; items: RegexNode[] }
  | { kind: 'alternation'; options: RegexNode[] }
  | { kind: 'repeat'; item: RegexNode; min: number; max: number | null };

export type ClassRange = { from: number; to: number };

// Beyond this a {m,n} makes a grammar llama.cpp spends long to build; no client needs more.
const MAX_REPEAT = 1000;

// JavaScript's classes without the u flag: \d and \w are ASCII, \s is Unicode white space.
const DIGIT: ClassRange[] = [{ from: 0x30, to: 0x39 }];
const WORD: ClassRange[] = [
  { from: 0x30, to: 0x39 },
  { from: 0x41, to: 0x5a },
  { from: 0x5f, to: 0x5f },
  { from: 0x61, to: 0x7a },
];
const SPACE: ClassRange[] = [
  { from: 0x09, to: 0x0d },
  { from: 0x20, to: 0x20 },
  { from: 0xa0, to: 0xa0 },
  { from: 0x1680, to: 0x1680 },
  { from: 0x2000, to: 0x200a },
  { from: 0x2028, to: 0x2029 },
  { from: 0x202f, to: 0x202f },
  { from: 0x205f, to: 0x205f },
  { from: 0x3000, to: 0x3000 },
  { from: 0xfeff, to: 0xfeff },
];
// What JavaScript's `.` does not match.
const LINE_BREAKS: ClassRange[] = [
  { from: 0x0a, to: 0x0a },
  { from: 0x0d, to: 0x0d },
  { from: 0x2028, to: 0x2029 },
];
const SHORTHANDS: Record<string, ClassRange[]> = { d: DIGIT, w: WORD, s: SPACE };
const SIMPLE_ESCAPES: Record<string, number> = { n: 0x0a, r: 0x0d, t: 0x09, f: 0x0c, v: 0x0b };

/** Refuses a guided_regex outside the documented subset: the client's value is bad, so invalid_request naming the parameter. */
export function refuseRegex(message: string): never {
  throw new EngineError('invalid_request', `guided_regex: ${message}`, 'guided_regex');
}

/**
 * A recursive-descent parser of the guided_regex subset (JavaScript syntax): literals and escapes,
 * classes, `.`, groups, alternation, greedy or lazy quantifiers, ^ and $ at the ends. What a
 * grammar cannot express, or what regex dialects read differently, is refused, never loosened.
 */
export class RegexParser {
  private position = 0;
  // \d \w \s met inside the class being read; their ranges join the class's own.
  private pendingShorthands: ClassRange[] = [];

  constructor(private readonly pattern: string) {}

  parse(): RegexNode {
    if (this.pattern.startsWith('^')) this.position = 1;
    const node = this.alternation();
    if (this.position < this.pattern.length) {
      if (this.pattern[this.position] === ')') refuseRegex(`unbalanced ')' at ${this.position}`);
      refuseRegex(`unexpected '${this.pattern[this.position]}' at ${this.position}`);
    }
    return node;
  }

  private peek(): string | undefined {
    return this.pattern[this.position];
  }

  private alternation(): RegexNode {
    const options = [this.sequence()];
    while (this.peek() === '|') {
      this.position++;
      options.push(this.sequence());
    }
    return options.length === 1 ? options[0] : { kind: 'alternation', options };
  }

  private sequence(): RegexNode {
    const items: RegexNode[] = [];
    for (;;) {
      const char = this.peek();
      if (char === undefined || char === '|' || char === ')') break;
      // The whole output is matched, so a final $ says nothing more.
      if (char === '$' && this.position === this.pattern.length - 1) {
        this.position++;
        break;
      }
      items.push(this.quantified(this.atom()));
    }
    return { kind: 'sequence', items };
  }

  private quantified(item: RegexNode): RegexNode {
    const char = this.peek();
    let min: number;
    let max: number | null;
    if (char === '?') [min, max] = [0, 1];
    else if (char === '*') [min, max] = [0, null];
    else if (char === '+') [min, max] = [1, null];
    else if (char === '{') {
      const match = /^\{(\d+)(,(\d*))?\}/.exec(this.pattern.slice(this.position));
      if (!match) refuseRegex(`'{' at ${this.position} is not a {m}, {m,} or {m,n} quantifier (write a literal brace as \\{)`);
      min = Number(match[1]);
      max = match[2] === undefined ? min : match[3] === '' ? null : Number(match[3]);
      if (max !== null && max < min) refuseRegex(`{${min},${max}} has its bounds reversed`);
      if (min > MAX_REPEAT || (max ?? 0) > MAX_REPEAT) refuseRegex(`repetition bounds above ${MAX_REPEAT} are not supported`);
      this.position += match[0].length - 1;
    } else return item;
    this.position++;
    // Laziness does not change which whole strings match, so a lazy quantifier is the greedy one.
    if (this.peek() === '?') this.position++;
    const next = this.peek();
    if (next === '+') refuseRegex(`possessive quantifiers are not supported (at ${this.position})`);
    if (next === '*' || next === '{' || next === '?') refuseRegex(`a quantifier cannot follow a quantifier (at ${this.position})`);
    return { kind: 'repeat', item, min, max };
  }

  private atom(): RegexNode {
    const start = this.position;
    const char = this.pattern[this.position++];
    if (char === '(') return this.group(start);
    if (char === '[') return this.characterClass(start);
    if (char === '.') return { kind: 'class', negated: true, items: LINE_BREAKS };
    if (char === '\\') return this.escape(start);
    if (char === '*' || char === '+' || char === '?' || char === '{') refuseRegex(`nothing to repeat at ${start}`);
    if (char === '^' || char === '$') refuseRegex(`anchors are supported only at the ends of the pattern (at ${start})`);
    const codePoint = this.pattern.codePointAt(start)!;
    this.position = start + String.fromCodePoint(codePoint).length;
    return { kind: 'literal', text: String.fromCodePoint(codePoint) };
  }

  private group(start: number): RegexNode {
    if (this.peek() === '?') {
      const ahead = this.pattern.slice(this.position, this.position + 3);
      if (ahead.startsWith('?:')) this.position += 2;
      else if (/^\?<[A-Za-z_$]/.test(ahead)) {
        // A named group captures, which says nothing about which strings match.
        const close = this.pattern.indexOf('>', this.position);
        if (close < 0) refuseRegex(`unclosed group name at ${start}`);
        this.position = close + 1;
      } else if (ahead.startsWith('?=') || ahead.startsWith('?!') || ahead.startsWith('?<')) refuseRegex(`lookaround is not supported (at ${start})`);
      else refuseRegex(`inline flags and (?${ahead.slice(1, 2)}…) groups are not supported (at ${start})`);
    }
    const inner = this.alternation();
    if (this.peek() !== ')') refuseRegex(`unclosed group opened at ${start}`);
    this.position++;
    return inner;
  }

  private escape(start: number): RegexNode {
    const char = this.pattern[this.position++];
    if (char === undefined) refuseRegex('the pattern ends with a lone backslash');
    const shorthand = SHORTHANDS[char.toLowerCase()];
    if (shorthand) return { kind: 'class', negated: char !== char.toLowerCase(), items: shorthand };
    return { kind: 'literal', text: String.fromCodePoint(this.escapedCharacter(char, start)) };
  }

  /** The code point an escape (after its backslash) stands for; the escapes with no single character are refused. */
  private escapedCharacter(char: string, start: number): number {
    if (char in SIMPLE_ESCAPES) return SIMPLE_ESCAPES[char];
    if (char === '0' && !/[0-9]/.test(this.peek() ?? '')) return 0;
    if (char === 'x') return this.hex(2, start);
    if (char === 'u') {
      if (this.peek() === '{') refuseRegex(`braced Unicode escapes are not supported (at ${start})`);
      return this.hex(4, start);
    }
    if (/[1-9]/.test(char) || char === 'k') refuseRegex(`backreferences are not supported (at ${start})`);
    if (char === 'b' || char === 'B') refuseRegex(`word boundaries (\\${char}) are not supported (at ${start})`);
    if (char === 'p' || char === 'P') refuseRegex(`Unicode properties (\\${char}) are not supported (at ${start})`);
    // Escaped punctuation stands for itself; an escaped letter or digit means something else in each dialect.
    if (/^[\x21-\x2f\x3a-\x40\x5b-\x60\x7b-\x7e ]$/.test(char)) return char.codePointAt(0)!;
    refuseRegex(`the escape \\${char} at ${start} is not supported`);
  }

  private hex(digits: number, start: number): number {
    const text = this.pattern.slice(this.position, this.position + digits);
    if (!new RegExp(`^[0-9a-fA-F]{${digits}}$`).test(text)) refuseRegex(`a malformed \\${digits === 2 ? 'x' : 'u'} escape at ${start}`);
    this.position += digits;
    return parseInt(text, 16);
  }

  private characterClass(start: number): RegexNode {
    const negated = this.peek() === '^';
    if (negated) this.position++;
    // JavaScript reads [] as matching nothing and [^] as anything; PCRE and Python read ']' there as a member.
    if (this.peek() === ']') refuseRegex(`a ']' first in the class opened at ${start} means different things in different dialects (escape it as \\])`);
    const items: ClassRange[] = [];
    for (;;) {
      const char = this.peek();
      if (char === undefined) refuseRegex(`unclosed character class opened at ${start}`);
      if (char === ']') break;
      const from = this.classMember(start);
      if (from === null) continue;
      if (this.peek() === '-' && this.pattern[this.position + 1] !== ']' && this.pattern[this.position + 1] !== undefined) {
        this.position++;
        const to = this.classMember(start);
        if (to === null) refuseRegex(`a range in the class opened at ${start} ends in a shorthand class`);
        if (to < from) refuseRegex(`the range in the class opened at ${start} is reversed`);
        items.push({ from, to });
      } else items.push({ from, to: from });
    }
    this.position++;
    return { kind: 'class', negated, items: this.pendingShorthands.splice(0).concat(items) };
  }

  /** One member of a class: its code point, or null for a shorthand (\d \w \s) whose ranges it collects. */
  private classMember(start: number): number | null {
    const char = this.pattern[this.position];
    if (char === '\\') {
      const escaped = this.pattern[this.position + 1];
      this.position += 2;
      if (escaped === undefined) refuseRegex(`unclosed character class opened at ${start}`);
      if (escaped in SHORTHANDS) {
        this.pendingShorthands.push(...SHORTHANDS[escaped]);
        return null;
      }
      if (escaped === 'D' || escaped === 'W' || escaped === 'S') refuseRegex(`negated shorthands (\\${escaped}) inside a class are not supported (at ${start})`);
      // Inside a class \b is a backspace in JavaScript and in Python.
      if (escaped === 'b') return 0x08;
      return this.escapedCharacter(escaped, start);
    }
    if (char === '[' && this.pattern[this.position + 1] === ':') refuseRegex(`POSIX classes are not supported (at ${start})`);
    const codePoint = this.pattern.codePointAt(this.position)!;
    this.position += String.fromCodePoint(codePoint).length;
    return codePoint;
  }
}
