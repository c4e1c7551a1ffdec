import { francAll } from 'franc-min';

// franc-min answers ISO 639-3; documents and HTTP speak ISO 639-1 where a language has a code
// there, so those are mapped and the rest (e.g. "fuv", "hms") are kept as franc gives them.
const ISO_639_1: Record<string, string> = {
  spa: 'es', eng: 'en', por: 'pt', ind: 'id', fra: 'fr', deu: 'de', jav: 'jv', vie: 'vi', ita: 'it', tur: 'tr',
  pol: 'pl', swh: 'sw', sun: 'su', ron: 'ro', hau: 'ha', bos: 'bs', hrv: 'hr', nld: 'nl', srp: 'sr', ckb: 'ku',
  yor: 'yo', uzn: 'uz', zlm: 'ms', ibo: 'ig', tgl: 'tl', hun: 'hu', azj: 'az', ces: 'cs', run: 'rn', plt: 'mg',
  nya: 'ny', kin: 'rw', zul: 'zu', swe: 'sv', lin: 'ln', som: 'so', rus: 'ru', ukr: 'uk', bel: 'be', bul: 'bg',
  kaz: 'kk', arb: 'ar', urd: 'ur', pes: 'fa', pbu: 'ps', hin: 'hi', mar: 'mr', npi: 'ne', cmn: 'zh', jpn: 'ja',
  kor: 'ko', ell: 'el', heb: 'he', tha: 'th', ben: 'bn', tam: 'ta', tel: 'te', kan: 'kn', mal: 'ml', guj: 'gu',
  pan: 'pa', ori: 'or', sin: 'si', mya: 'my', khm: 'km', lao: 'lo', kat: 'ka', hye: 'hy', amh: 'am', bod: 'bo',
};

/** Below this many letters the trigram guess is noise, so no language is reported. */
export const MIN_LANGUAGE_LETTERS = 40;
/**
 * franc scores the best language 1 and the others relative to it; a runner-up this close means the
 * text is too short or too mixed to tell (an English invoice of 20 words scores French 0.97), and a
 * wrong language is worse than none.
 */
export const MAX_RUNNER_UP_SCORE = 0.95;

/** The text's language as ISO 639-1 (639-3 when there is no 639-1 code), or null when too short or not clear. */
export function detectLanguage(text: string): string | null {
  // A long document: its beginning decides; franc's cost grows with the text.
  const sample = text.slice(0, 20_000);
  if ((sample.match(/\p{L}/gu)?.length ?? 0) < MIN_LANGUAGE_LETTERS) return null;
  const [best, second] = francAll(sample, { minLength: MIN_LANGUAGE_LETTERS });
  if (!best || best[0] === 'und' || (second && second[1] > MAX_RUNNER_UP_SCORE)) return null;
  const code = best[0];
  return ISO_639_1[code] ?? code;
}
