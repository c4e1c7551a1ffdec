import { createHash } from 'node:crypto';
import naiveBayesTextClassifier, { type NaiveBayesTextClassifier } from 'wink-naive-bayes-text-classifier';
import nlp from 'wink-nlp-utils';

/** Training and prediction read this much of a document's text: its beginning carries its kind. */
export const MAX_CLASSIFIER_TEXT = 20_000;
/** Share of each category's documents held out to measure accuracy. */
const HELD_OUT_SHARE = 0.2;
/** Fewer held-out documents than this say nothing reliable: accuracy is then null. */
export const MIN_HELD_OUT = 4;

export interface LabelledText {
  text: string;
  category: string;
}

export interface TrainedModel {
  model: string;
  labels: string[];
  accuracy: number | null;
  trainedOn: number;
  heldOut: number;
}

function classifier(): NaiveBayesTextClassifier {
  const nbc = naiveBayesTextClassifier();
  // Lower case, split, drop English stop words, stem: "Invoices" and "invoiced" count as one word.
  nbc.definePrepTasks([nlp.string.lowerCase, nlp.string.tokenize0, nlp.tokens.removeWords, nlp.tokens.stem]);
  return nbc;
}

function learnAll(examples: LabelledText[]): NaiveBayesTextClassifier {
  const nbc = classifier();
  // Presence, not counts: a long document repeating a word must not outvote the rest.
  nbc.defineConfig({ considerOnlyPresence: true, smoothingFactor: 0.5 });
  for (const example of examples) nbc.learn(example.text.slice(0, MAX_CLASSIFIER_TEXT), example.category);
  nbc.consolidate();
  return nbc;
}

/**
 * Trains on the examples, or answers null when they cannot make a model (fewer than two
 * categories, or too small a vocabulary). Accuracy comes from a stratified split first: up to 20%
 * of each category with at least 3 documents (at least one) is held out, a model trained on the
 * rest predicts them; the stored model is then trained on every example.
 */
export function train(examples: LabelledText[]): TrainedModel | null {
  const usable = examples.filter((example) => example.text.trim() && example.category);
  const byCategory = new Map<string, LabelledText[]>();
  for (const example of usable) byCategory.set(example.category, [...(byCategory.get(example.category) ?? []), example]);
  if (byCategory.size < 2) return null;

  const training: LabelledText[] = [];
  const heldOut: LabelledText[] = [];
  for (const group of byCategory.values()) {
    // A fixed order (by content hash) so that the same examples always split the same way.
    const ordered = [...group].sort((a, b) => hash(a.text).localeCompare(hash(b.text)));
    const hold = ordered.length >= 3 ? Math.max(1, Math.round(ordered.length * HELD_OUT_SHARE)) : 0;
    heldOut.push(...ordered.slice(0, hold));
    training.push(...ordered.slice(hold));
  }
  let accuracy: number | null = null;
  if (heldOut.length >= MIN_HELD_OUT && new Set(training.map((example) => example.category)).size >= 2) {
    try {
      const probe = learnAll(training);
      const right = heldOut.filter((example) => probe.predict(example.text.slice(0, MAX_CLASSIFIER_TEXT)) === example.category).length;
      accuracy = Math.round((right / heldOut.length) * 1000) / 1000;
    } catch {
      accuracy = null;
    }
  }
  let nbc: NaiveBayesTextClassifier;
  try {
    nbc = learnAll(usable);
  } catch {
    // wink refuses fewer than two labels or a vocabulary under ten words.
    return null;
  }
  return { model: nbc.exportJSON(), labels: [...byCategory.keys()].sort(), accuracy, trainedOn: usable.length, heldOut: accuracy === null ? 0 : heldOut.length };
}

/**
 * Each label's probability for the text, highest first. wink gives every label's log2 odds
 * against the rest; a softmax over them (base 2) makes probabilities that sum to 1. Empty when
 * no word of the text is in the model's vocabulary.
 */
export function predict(model: string, text: string): { category: string; probability: number }[] {
  const nbc = classifier();
  nbc.importJSON(model);
  nbc.consolidate();
  const odds = nbc.computeOdds(text.slice(0, MAX_CLASSIFIER_TEXT));
  if (odds.length === 1 && odds[0][0] === 'unknown' && odds[0][1] === 0) return [];
  const top = Math.max(...odds.map(([, value]) => value));
  const weights = odds.map(([category, value]) => ({ category, weight: 2 ** (value - top) }));
  const sum = weights.reduce((total, entry) => total + entry.weight, 0);
  return weights.map(({ category, weight }) => ({ category, probability: weight / sum })).sort((a, b) => b.probability - a.probability);
}

function hash(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}
