// to-regex-range ships no types; only the call the JSON bounds grammar makes.
declare module 'to-regex-range' {
  interface ToRegexRangeOptions {
    capture?: boolean;
    shorthand?: boolean;
    relaxZeros?: boolean;
    wrap?: boolean;
  }
  /** A regex source matching exactly the integers from min to max (no leading zeros, no "-0"). */
  export default function toRegexRange(min: number | string, max?: number | string, options?: ToRegexRangeOptions): string;
}
