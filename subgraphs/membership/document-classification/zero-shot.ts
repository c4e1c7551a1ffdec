import type { ZeroShotSettings } from './classification-settings.js';
import { DEFAULT_ZERO_SHOT_TIMEOUT_MS } from './classification-settings.js';

/** The prompt carries this much of the document: enough to tell its kind, little enough for a small context. */
export const ZERO_SHOT_TEXT = 3_000;

export interface ZeroShotChoice {
  category: string;
  /** exp(sum of the answer's token log-probabilities) when the provider gives them, else 0.5 (unscored). */
  confidence: number;
}

/**
 * Asks the model to pick one category, constrained by `guided_choice` so that the answer can only
 * be one of the names. An answer that is nonetheless not a category, an error, or no answer within
 * the timeout is reported as a reason (a string) for the caller to log; it never throws.
 */
export async function zeroShotChoice(settings: ZeroShotSettings, categories: string[], doc: { text: string; title: string | null; filename: string }): Promise<ZeroShotChoice | string> {
  const url = `${settings.baseUrl.replace(/\/+$/, '')}/chat/completions`;
  const body = {
    model: settings.model,
    messages: [
      { role: 'system', content: `You file documents. Answer with exactly one of these categories: ${categories.join(', ')}.` },
      { role: 'user', content: `Filename: ${doc.filename}\nTitle: ${doc.title ?? ''}\n\n${doc.text.slice(0, ZERO_SHOT_TEXT)}\n\nCategory:` },
    ],
    guided_choice: categories,
    temperature: 0,
    max_tokens: 16,
    // No `logprobs`: this platform's gateway refuses parameters its engines cannot honour, and a
    // refused request would lose the answer. A provider that sends them anyway is read below.
  };
  let response: Response;
  try {
    response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(settings.apiKey ? { authorization: `Bearer ${settings.apiKey}` } : {}) },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(settings.timeoutMs ?? DEFAULT_ZERO_SHOT_TIMEOUT_MS),
    });
  } catch (error) {
    const name = (error as Error).name;
    return name === 'TimeoutError' || name === 'AbortError' ? 'zero-shot provider timed out' : `zero-shot provider unreachable: ${(error as Error).message}`;
  }
  let payload: { choices?: { message?: { content?: string | null }; logprobs?: { content?: { logprob: number }[] | null } | null }[] };
  try {
    payload = (await response.json()) as typeof payload;
  } catch {
    return `zero-shot provider answered ${response.status} with a body that is not JSON`;
  }
  if (!response.ok) return `zero-shot provider answered ${response.status}`;
  const answer = payload.choices?.[0]?.message?.content?.trim() ?? '';
  const category = categories.find((name) => name.toLowerCase() === answer.toLowerCase());
  if (!category) return `zero-shot answer "${answer.slice(0, 100)}" is not a category`;
  const logprobs = payload.choices?.[0]?.logprobs?.content;
  const confidence = logprobs?.length ? Math.exp(logprobs.reduce((sum, token) => sum + token.logprob, 0)) : 0.5;
  return { category, confidence: Math.round(Math.min(1, Math.max(0, confidence)) * 1000) / 1000 };
}
