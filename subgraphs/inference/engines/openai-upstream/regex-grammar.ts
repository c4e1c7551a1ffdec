import { EngineError } from '../../engine/text-engine.js';

const PARAM = 'guided_regex';

const CLASS_ESCAPES: Record<string, string> = { d: '0-9', w: 'a-zA-Z0-9_', s: ' \t\n\r\f\v' };

// Literals, classes, `.`, groups, alternation and greedy or lazy quantifiers translate; what GBNF
// cannot express (backreferences, lookaround, word boundaries, inner anchors, Unicode properties,
// flags) is refused rather than loosened.

/** A GBNF grammar (llama.cpp's) matching exactly the strings the pattern matches in full, as vLLM's structured_outputs.regex does. */
export function regexToGbnf(pattern: string): string {
  try {
    new RegExp(pattern);
  } catch {
    throw new EngineError('invalid_request', 'guided_regex is not a valid regular expression', PARAM);
  }
  // The whole output is matched, so anchors at the very ends say nothing more.
  let body = pattern.startsWith('^') ? pattern.slice(1) : pattern;
  if (/(^|[^\\])(\\\\)*\$$/.test(body)) body = body.slice(0, -1);
  const parser = new RegexGrammar(body);
  const root = parser.alternation();
  if (!parser.done()) throw refuse('an unbalanced parenthesis');
  return `root ::= ${root}`;
}

function refuse(feature: string): EngineError {
  return new EngineError('unsupported_parameter', `guided_regex uses ${feature}, which the upstream engine (llama.cpp) cannot constrain output to`, PARAM);
}

// A code point as GBNF writes it: letters, digits and space as they are, anything else escaped.
function gbnfChar(code: number): string {
  const char = String.fromCodePoint(code);
  if (/[A-Za-z0-9 ]/.test(char)) return char;
  if (code <= 0xff) return `\\x${code.toString(16).padStart(2, '0')}`;
  if (code <= 0xffff) return `\\u${code.toString(16).padStart(4, '0')}`;
  return `\\U${code.toString(16).padStart(8, '0')}`;
}

function gbnfClassRanges(ranges: string): string {
  // CLASS_ESCAPES' ranges are plain text: escape their characters but keep the dashes of ranges.
  return [...ranges].map((char, i, all) => (char === '-' && i > 0 && i < all.length - 1 ? '-' : gbnfChar(char.codePointAt(0)!))).join('');
}

// Reads a pattern by recursive descent, writing the grammar as it goes.
class RegexGrammar {
  private pos = 0;
  private readonly chars: string[];

  constructor(pattern: string) {
    this.chars = [...pattern];
  }

  done(): boolean {
    return this.pos >= this.chars.length;
  }

  alternation(): string {
    const branches = [this.sequence()];
    while (this.peek() === '|') {
      this.pos++;
      branches.push(this.sequence());
    }
    return branches.join(' | ');
  }

  private sequence(): string {
    const items: string[] = [];
    while (!this.done() && this.peek() !== '|' && this.peek() !== ')') {
      const atom = this.atom();
      items.push(atom + this.quantifier());
    }
    return items.length > 0 ? items.join(' ') : '""';
  }

  private atom(): string {
    const char = this.next();
    switch (char) {
      case '(': {
        if (this.peek() === '?') {
          const ahead = this.chars.slice(this.pos, this.pos + 3).join('');
          if (ahead.startsWith('?:')) this.pos += 2;
          else if (/^\?<[A-Za-z_]/.test(ahead)) {
            while (!this.done() && this.next() !== '>');
          } else throw refuse(ahead.startsWith('?=') || ahead.startsWith('?!') || ahead.startsWith('?<') ? 'lookaround' : 'an inline flag');
        }
        const inner = this.alternation();
        if (this.next() !== ')') throw refuse('an unbalanced parenthesis');
        return `(${inner})`;
      }
      case '[':
        return this.characterClass();
      case '.':
        return '[^\\x0a]';
      case '\\':
        return this.escape(false);
      case '^':
      case '$':
        throw refuse('an anchor inside the pattern');
      case '*':
      case '+':
      case '?':
      case '{':
        throw refuse('a quantifier with nothing to repeat');
      case undefined:
        throw refuse('an unbalanced parenthesis');
      default:
        return `"${gbnfChar(char.codePointAt(0)!)}"`;
    }
  }

  // An escape outside a class is a class or a literal; inside one, the class's ranges or a character.
  private escape(inClass: boolean): string {
    const char = this.next();
    if (char === undefined) throw refuse('a trailing backslash');
    const lower = char.toLowerCase();
    if (lower in CLASS_ESCAPES) {
      const negated = char !== lower;
      if (inClass) {
        if (negated) throw refuse(`\\${char} inside a character class`);
        return gbnfClassRanges(CLASS_ESCAPES[lower]);
      }
      return `[${negated ? '^' : ''}${gbnfClassRanges(CLASS_ESCAPES[lower])}]`;
    }
    const code = this.escapedCode(char);
    return inClass ? gbnfChar(code) : `"${gbnfChar(code)}"`;
  }

  private escapedCode(char: string): number {
    const simple: Record<string, number> = { n: 10, r: 13, t: 9, f: 12, v: 11, '0': 0 };
    if (char in simple && !(char === '0' && /[0-9]/.test(this.peek() ?? ''))) return simple[char];
    if (char === 'x') return this.hex(2);
    if (char === 'u') {
      if (this.peek() === '{') throw refuse('a braced Unicode escape');
      return this.hex(4);
    }
    if (/[1-9]/.test(char) || char === 'k') throw refuse('a backreference');
    if (char === 'b' || char === 'B') throw refuse('a word boundary');
    if (char === 'p' || char === 'P') throw refuse('a Unicode property');
    if (char === 'c') throw refuse('a control escape');
    return char.codePointAt(0)!;
  }

  private hex(digits: number): number {
    const text = this.chars.slice(this.pos, this.pos + digits).join('');
    if (!new RegExp(`^[0-9a-fA-F]{${digits}}$`).test(text)) throw refuse('a malformed escape');
    this.pos += digits;
    return parseInt(text, 16);
  }

  private characterClass(): string {
    let out = '[';
    if (this.peek() === '^') {
      this.pos++;
      out += '^';
    }
    let first = true;
    while (true) {
      const char = this.next();
      if (char === undefined) throw refuse('an unclosed character class');
      if (char === ']' && !first) break;
      first = false;
      let low: string;
      let lowCode: number | undefined;
      if (char === '\\') {
        const escaped = this.escape(true);
        // \d, \w and \s give ranges and cannot start a range themselves.
        if (escaped.length > 1 && !escaped.startsWith('\\')) {
          out += escaped;
          continue;
        }
        low = escaped;
        lowCode = decode(escaped);
      } else {
        low = gbnfChar(char.codePointAt(0)!);
        lowCode = char.codePointAt(0)!;
      }
      if (this.peek() === '-' && this.chars[this.pos + 1] !== undefined && this.chars[this.pos + 1] !== ']') {
        this.pos++;
        let high = this.next()!;
        let highCode: number;
        if (high === '\\') {
          const escaped = this.escape(true);
          if (escaped.length > 1 && !escaped.startsWith('\\')) throw refuse('a class escape as a range end');
          high = escaped;
          highCode = decode(escaped);
        } else {
          highCode = high.codePointAt(0)!;
          high = gbnfChar(highCode);
        }
        if (highCode < lowCode) throw new EngineError('invalid_request', 'guided_regex has a character range out of order', PARAM);
        out += `${low}-${high}`;
      } else out += low;
    }
    if (out === '[' || out === '[^') throw refuse('an empty character class');
    return `${out}]`;
  }

  private quantifier(): string {
    const char = this.peek();
    let quantifier = '';
    if (char === '*' || char === '+' || char === '?') {
      this.pos++;
      quantifier = char;
    } else if (char === '{') {
      const rest = this.chars.slice(this.pos).join('');
      const match = /^\{(\d+)(,(\d*))?\}/.exec(rest);
      if (!match) throw refuse('a malformed repetition');
      this.pos += [...match[0]].length;
      quantifier = match[0].replace(/\s/g, '');
    } else return '';
    // Laziness does not change which whole strings match; possessiveness is not JavaScript.
    if (this.peek() === '?') this.pos++;
    if (this.peek() === '*' || this.peek() === '+' || this.peek() === '{') throw refuse('a repeated quantifier');
    return quantifier;
  }

  private peek(): string | undefined {
    return this.chars[this.pos];
  }

  private next(): string | undefined {
    return this.chars[this.pos++];
  }
}

// The code point of one gbnfChar() output.
function decode(gbnf: string): number {
  if (!gbnf.startsWith('\\')) return gbnf.codePointAt(0)!;
  return parseInt(gbnf.slice(2), 16);
}
