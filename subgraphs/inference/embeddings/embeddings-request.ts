import { z } from 'zod';

/** OpenAI's limit on inputs in one embeddings call. */
export const MAX_EMBEDDING_INPUTS = 2048;

const text = z.string().min(1, 'An input text must not be empty');
const tokens = z.array(z.number().int().nonnegative()).min(1, 'A token array must not be empty');

/**
 * OpenAI's embeddings body: one text, texts, one token array or token arrays; empty texts and
 * arrays are refused as OpenAI refuses them. Unknown parameters are refused (strict), and null
 * for an optional field means absent.
 */
export const embeddingsSchema = z.strictObject({
  model: z.string().min(1),
  input: z.union([text, z.array(text).min(1).max(MAX_EMBEDDING_INPUTS), tokens, z.array(tokens).min(1).max(MAX_EMBEDDING_INPUTS)]),
  encoding_format: z.enum(['float', 'base64']).nullable().optional(),
  dimensions: z.number().int().positive().nullable().optional(),
  user: z.string().nullable().optional(),
  /** The gateway's choice of provider; refused elsewhere as unknown. */
  provider: z.string().min(1).optional(),
});

export type EmbeddingsBody = z.infer<typeof embeddingsSchema>;

/** The inputs as the engine takes them: one vector each. */
export function inputsOf(input: EmbeddingsBody['input']): (string | number[])[] {
  if (typeof input === 'string') return [input];
  if (input.every((item) => typeof item === 'number')) return [input as number[]];
  return input as (string | number[])[];
}

/** A vector as OpenAI's base64 encoding: its float32 values' little-endian bytes. */
export function base64Of(vector: number[]): string {
  const bytes = Buffer.alloc(vector.length * 4);
  vector.forEach((value, i) => bytes.writeFloatLE(value, i * 4));
  return bytes.toString('base64');
}
