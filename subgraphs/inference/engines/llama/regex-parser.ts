import { EngineError } from '../../engine/text-engine.js';

/** The parsed guided_regex: what regex-to-gbnf turns into grammar rules. */
export type RegexNode =
  | { kind: 'literal'; text: string }
  | { kind: 'class'; negated: boolean; items: ClassRange[] }
  | { kind: 'sequence'; items: RegexNode[] }
  | { kind: 'alternation'; options: RegexNode[] }
  | { kind: 'repeat'; item: RegexNode; min: number; max: number | null };

export type ClassRange = { from: number; to: number };

// Beyond this a {m,n} would make a grammar llama.cpp spends long to build; no client needs more.
const MAX_REPEAT = 1000;

const DIGIT: ClassRange[] = [{ from: 0x30, to: 0x39 }];
const WORD: ClassRange[] = [{ from: 0x30, to: 0x39 }, { from: 0x41, to: 0x5a }, { from: 0x5f, to: 0x5f }, { from: 0x61, to: 0x7a }];
const SPACE: ClassRange[] = [{ from: 0x09, to: 0x0d }, { from: 0x20, to: 0x20 }];
// What JavaScript's `.` does not match.
const LINE_BREAKS: ClassRange[] = [{ from: 0x0a, to: 0x0a }, { from: 0x0d, to: 0x0d }, { from: 0x2028, to: 0x2029 }];

/** Refuses a guided_regex outside the supported subset, naming the parameter. */
export function refuse(message: string): never {
  throw new EngineError('invalid_request', `guided_regex: ${message}`, 'guided_regex');
}

/** A recursive-descent parser of the documented regex subset; anything else is refused. */
export class RegexParser {
  private position = 0;
  // \d \w \s met inside the class being read; their ranges join the class's own.
  private pendingShorthands: ClassRange[] = [];

  constructor(private readonly pattern: string) {}

  parse(): RegexNode {
    if (this.pattern.startsWith('^')) this.position = 1;
    const node = this.alternation();
    if (this.position < this.pattern.length) {
      if (this.pattern[this.position] === ')') refuse(`unbalanced ')' at ${this.position}`);
      refuse(`unexpected '${this.pattern[this.position]}' at ${this.position}`);
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
      if (!match) refuse(`'{' at ${this.position} is not a {m}, {m,} or {m,n} quantifier`);
      min = Number(match[1]);
      max = match[2] === undefined ? min : match[3] === '' ? null : Number(match[3]);
      if (max !== null && max < min) refuse(`{${min},${max}} has its bounds reversed`);
      if (min > MAX_REPEAT || (max ?? 0) > MAX_REPEAT) refuse(`repetition bounds above ${MAX_REPEAT} are not supported`);
      this.position += match[0].length - 1;
    } else return item;
    this.position++;
    const next = this.peek();
    if (next === '?' || next === '+') refuse(`lazy and possessive quantifiers are not supported (at ${this.position})`);
    if (next === '*' || next === '{') refuse(`a quantifier cannot follow a quantifier (at ${this.position})`);
    return { kind: 'repeat', item, min, max };
  }

  private atom(): RegexNode {
    const start = this.position;
    const char = this.pattern[this.position++];
    if (char === '(') {
      if (this.peek() === '?') {
        if (this.pattern[this.position + 1] !== ':') refuse(`lookaround and named groups are not supported (at ${start})`);
        this.position += 2;
      }
      const inner = this.alternation();
      if (this.peek() !== ')') refuse(`unclosed group opened at ${start}`);
      this.position++;
      return inner;
    }
    if (char === '[') return this.characterClass(start);
    if (char === '.') return { kind: 'class', negated: true, items: LINE_BREAKS };
    if (char === '\\') return this.escape(start);
    if (char === '*' || char === '+' || char === '?' || char === '{') refuse(`nothing to repeat at ${start}`);
    if (char === '^' || char === '$') refuse(`anchors are supported only at the ends of the pattern (at ${start})`);
    const codePoint = this.pattern.codePointAt(start)!;
    this.position = start + String.fromCodePoint(codePoint).length;
    return { kind: 'literal', text: String.fromCodePoint(codePoint) };
  }

  private escape(start: number): RegexNode {
    const char = this.pattern[this.position++];
    if (char === undefined) refuse('the pattern ends with a lone backslash');
    if (char === 'd') return { kind: 'class', negated: false, items: DIGIT };
    if (char === 'D') return { kind: 'class', negated: true, items: DIGIT };
    if (char === 'w') return { kind: 'class', negated: false, items: WORD };
    if (char === 'W') return { kind: 'class', negated: true, items: WORD };
    if (char === 's') return { kind: 'class', negated: false, items: SPACE };
    if (char === 'S') return { kind: 'class', negated: true, items: SPACE };
    return { kind: 'literal', text: String.fromCodePoint(this.escapedCharacter(char, start)) };
  }

  private escapedCharacter(char: string, start: number): number {
    if (char === 'n') return 0x0a;
    if (char === 'r') return 0x0d;
    if (char === 't') return 0x09;
    if (/^[\\^$.|?*+()[\]{}\-/]$/.test(char)) return char.codePointAt(0)!;
    refuse(`the escape \\${char} at ${start} is not supported`);
  }

  private characterClass(start: number): RegexNode {
    const negated = this.peek() === '^';
    if (negated) this.position++;
    const items: ClassRange[] = [];
    let first = true;
    for (;;) {
      const char = this.peek();
      if (char === undefined) refuse(`unclosed character class opened at ${start}`);
      if (char === ']' && !first) break;
      first = false;
      const from = this.classMember(start);
      if (from === null) continue;
      if (this.peek() === '-' && this.pattern[this.position + 1] !== ']' && this.pattern[this.position + 1] !== undefined) {
        this.position++;
        const to = this.classMember(start);
        if (to === null) refuse(`a range in the class opened at ${start} ends in a shorthand class`);
        if (to < from) refuse(`the range in the class opened at ${start} is reversed`);
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
      if (escaped === undefined) refuse(`unclosed character class opened at ${start}`);
      if (escaped === 'd' || escaped === 'w' || escaped === 's') {
        this.pendingShorthands.push(...(escaped === 'd' ? DIGIT : escaped === 'w' ? WORD : SPACE));
        return null;
      }
      if (escaped === 'D' || escaped === 'W' || escaped === 'S') refuse(`negated shorthands inside a class are not supported (at ${start})`);
      return this.escapedCharacter(escaped, start);
    }
    if (char === '[' && this.pattern[this.position + 1] === ':') refuse(`POSIX classes are not supported (at ${start})`);
    const codePoint = this.pattern.codePointAt(this.position)!;
    this.position += String.fromCodePoint(codePoint).length;
    return codePoint;
  }
}

