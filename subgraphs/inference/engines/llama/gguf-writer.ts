import { access, mkdir, rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { GgufByteSink } from './gguf-byte-sink.js';

/**
 * Writes a random-weight llama GGUF (format v3) that llama.cpp loads like any other model: tiny
 * dimensions, a SentencePiece-style vocabulary of unique pieces (every byte reachable through the
 * <0xXX> fallback pieces, which llama.cpp's SPM tokenizer requires), ChatML as
 * `tokenizer.chat_template`. Its output is gibberish: it checks the pipeline, not the answers.
 */

export interface RandomGgufOptions {
  /** Seed of the weights: the same seed writes the same bytes. */
  seed?: number;
  /** `llama.context_length`, the model's maximum context. */
  contextLength?: number;
  name?: string;
  embeddingLength?: number;
  blockCount?: number;
  headCount?: number;
  headCountKv?: number;
  feedForwardLength?: number;
  chatTemplate?: string | null;
}

export const CHATML_TEMPLATE =
  "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}{% endfor %}" +
  "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

// GGUF value types (gguf.md, "gguf_metadata_value_type").
const T_UINT32 = 4;
const T_INT32 = 5;
const T_FLOAT32 = 6;
const T_BOOL = 7;
const T_STRING = 8;
const T_ARRAY = 9;
// ggml_type F32.
const GGML_F32 = 0;
const ALIGNMENT = 32;

// llama_token_type as llama.cpp reads `tokenizer.ggml.token_type`.
const TOKEN_NORMAL = 1;
const TOKEN_UNKNOWN = 2;
const TOKEN_CONTROL = 3;
const TOKEN_BYTE = 6;

const WORDS = ['the', 'pipeline', 'check', 'model', 'token', 'hello', 'world', 'yes', 'no', 'true', 'false', 'null', 'red', 'green', 'blue', 'one', 'two', 'three', 'gibberish', 'random'];

type MetaValue = { type: typeof T_UINT32 | typeof T_INT32 | typeof T_FLOAT32; value: number } | { type: typeof T_BOOL; value: boolean } | { type: typeof T_STRING; value: string } | { type: typeof T_ARRAY; itemType: number; values: (number | string)[] };

interface Vocabulary {
  tokens: string[];
  scores: number[];
  types: number[];
}

/** The vocabulary: control tokens, 256 byte pieces, printable ASCII, '▁'-prefixed words; all pieces distinct. */
function vocabulary(): Vocabulary {
  const tokens: string[] = [];
  const scores: number[] = [];
  const types: number[] = [];
  const add = (piece: string, score: number, type: number) => {
    tokens.push(piece);
    scores.push(score);
    types.push(type);
  };
  add('<unk>', 0, TOKEN_UNKNOWN);
  add('<s>', 0, TOKEN_CONTROL);
  add('</s>', 0, TOKEN_CONTROL);
  for (let byte = 0; byte < 256; byte++) add(`<0x${byte.toString(16).toUpperCase().padStart(2, '0')}>`, 0, TOKEN_BYTE);
  add('<|im_start|>', 0, TOKEN_CONTROL);
  add('<|im_end|>', 0, TOKEN_CONTROL);
  // SentencePiece merges the highest-scoring pair first, so longer pieces score higher.
  add('\u2581', -1, TOKEN_NORMAL);
  for (let code = 0x21; code <= 0x7e; code++) add(String.fromCharCode(code), -2, TOKEN_NORMAL);
  add('\n', -2, TOKEN_NORMAL);
  for (let digit = 0; digit <= 9; digit++) add(`\u2581${digit}`, -1.5, TOKEN_NORMAL);
  for (const word of WORDS) {
    for (let end = 2; end <= word.length; end++) {
      const piece = word.slice(0, end);
      if (!tokens.includes(piece)) add(piece, end - 10, TOKEN_NORMAL);
      if (!tokens.includes(`\u2581${piece}`)) add(`\u2581${piece}`, end - 9.5, TOKEN_NORMAL);
    }
  }
  return { tokens, scores, types };
}

/** mulberry32: a small seeded generator, so a seed always writes the same weights. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function writeScalar(sink: GgufByteSink, type: number, value: number | string | boolean): void {
  if (type === T_UINT32) sink.u32(value as number);
  else if (type === T_INT32) sink.i32(value as number);
  else if (type === T_FLOAT32) sink.f32(value as number);
  else if (type === T_BOOL) sink.push(Buffer.from([value ? 1 : 0]));
  else sink.string(value as string);
}

/** Builds the bytes of a random-weight llama GGUF. */
export function randomGgufBytes(options: RandomGgufOptions = {}): Buffer {
  const nEmbd = options.embeddingLength ?? 64;
  const nLayer = options.blockCount ?? 2;
  const nHead = options.headCount ?? 4;
  const nHeadKv = options.headCountKv ?? 2;
  const nFf = options.feedForwardLength ?? 128;
  const headDim = nHead > 0 ? Math.floor(nEmbd / nHead) : nEmbd;
  const vocab = vocabulary();
  const nVocab = vocab.tokens.length;

  const meta: [string, MetaValue][] = [
    ['general.architecture', { type: T_STRING, value: 'llama' }],
    ['general.name', { type: T_STRING, value: options.name ?? 'pipeline-check' }],
    ['general.description', { type: T_STRING, value: 'Random weights written by the platform to check the inference pipeline; its output is gibberish.' }],
    ['general.alignment', { type: T_UINT32, value: ALIGNMENT }],
    ['llama.context_length', { type: T_UINT32, value: options.contextLength ?? 2048 }],
    ['llama.embedding_length', { type: T_UINT32, value: nEmbd }],
    ['llama.block_count', { type: T_UINT32, value: nLayer }],
    ['llama.feed_forward_length', { type: T_UINT32, value: nFf }],
    ['llama.attention.head_count', { type: T_UINT32, value: nHead }],
    ['llama.attention.head_count_kv', { type: T_UINT32, value: nHeadKv }],
    ['llama.attention.layer_norm_rms_epsilon', { type: T_FLOAT32, value: 1e-5 }],
    ['llama.rope.dimension_count', { type: T_UINT32, value: headDim }],
    ['llama.rope.freq_base', { type: T_FLOAT32, value: 10000 }],
    ['llama.vocab_size', { type: T_UINT32, value: nVocab }],
    ['tokenizer.ggml.model', { type: T_STRING, value: 'llama' }],
    ['tokenizer.ggml.tokens', { type: T_ARRAY, itemType: T_STRING, values: vocab.tokens }],
    ['tokenizer.ggml.scores', { type: T_ARRAY, itemType: T_FLOAT32, values: vocab.scores }],
    ['tokenizer.ggml.token_type', { type: T_ARRAY, itemType: T_INT32, values: vocab.types }],
    ['tokenizer.ggml.unknown_token_id', { type: T_UINT32, value: 0 }],
    ['tokenizer.ggml.bos_token_id', { type: T_UINT32, value: 1 }],
    ['tokenizer.ggml.eos_token_id', { type: T_UINT32, value: 2 }],
    ['tokenizer.ggml.eot_token_id', { type: T_UINT32, value: vocab.tokens.indexOf('<|im_end|>') }],
    ['tokenizer.ggml.add_bos_token', { type: T_BOOL, value: true }],
    ['tokenizer.ggml.add_eos_token', { type: T_BOOL, value: false }],
  ];
  if (options.chatTemplate !== null) meta.push(['tokenizer.chat_template', { type: T_STRING, value: options.chatTemplate ?? CHATML_TEMPLATE }]);

  // Shapes as ggml's ne (innermost first): a weight of a layer mapping a to b is [a, b].
  const tensors: { name: string; dims: number[]; fill: 'one' | 'random' }[] = [
    { name: 'token_embd.weight', dims: [nEmbd, nVocab], fill: 'random' },
    { name: 'output_norm.weight', dims: [nEmbd], fill: 'one' },
    { name: 'output.weight', dims: [nEmbd, nVocab], fill: 'random' },
  ];
  for (let layer = 0; layer < nLayer; layer++) {
    const blk = `blk.${layer}`;
    tensors.push(
      { name: `${blk}.attn_norm.weight`, dims: [nEmbd], fill: 'one' },
      { name: `${blk}.attn_q.weight`, dims: [nEmbd, headDim * nHead], fill: 'random' },
      { name: `${blk}.attn_k.weight`, dims: [nEmbd, headDim * nHeadKv], fill: 'random' },
      { name: `${blk}.attn_v.weight`, dims: [nEmbd, headDim * nHeadKv], fill: 'random' },
      { name: `${blk}.attn_output.weight`, dims: [headDim * nHead, nEmbd], fill: 'random' },
      { name: `${blk}.ffn_norm.weight`, dims: [nEmbd], fill: 'one' },
      { name: `${blk}.ffn_gate.weight`, dims: [nEmbd, nFf], fill: 'random' },
      { name: `${blk}.ffn_down.weight`, dims: [nFf, nEmbd], fill: 'random' },
      { name: `${blk}.ffn_up.weight`, dims: [nEmbd, nFf], fill: 'random' },
    );
  }

  const sink = new GgufByteSink(ALIGNMENT);
  sink.push(Buffer.from('GGUF', 'ascii'));
  sink.u32(3);
  sink.u64(tensors.length);
  sink.u64(meta.length);
  for (const [key, value] of meta) {
    sink.string(key);
    sink.u32(value.type);
    if (value.type === T_ARRAY) {
      sink.u32(value.itemType);
      sink.u64(value.values.length);
      for (const item of value.values) writeScalar(sink, value.itemType, item);
    } else writeScalar(sink, value.type, value.value);
  }
  let offset = 0;
  const sizes: number[] = [];
  for (const tensor of tensors) {
    sink.string(tensor.name);
    sink.u32(tensor.dims.length);
    for (const dim of tensor.dims) sink.u64(dim);
    sink.u32(GGML_F32);
    sink.u64(offset);
    const size = tensor.dims.reduce((a, b) => a * b, 1) * 4;
    sizes.push(size);
    offset += Math.ceil(size / ALIGNMENT) * ALIGNMENT;
  }
  sink.pad();
  const next = random(options.seed ?? 1);
  tensors.forEach((tensor, index) => {
    const data = Buffer.alloc(Math.ceil(sizes[index] / ALIGNMENT) * ALIGNMENT);
    // Large enough weights that the logits are peaked: a seed then picks a visibly different text.
    const scale = tensor.fill === 'one' ? 0 : 1 / Math.sqrt(tensor.dims[0]) * 2;
    for (let i = 0; i < sizes[index] / 4; i++) data.writeFloatLE(tensor.fill === 'one' ? 1 : (next() * 2 - 1) * scale, i * 4);
    sink.push(data);
  });
  return sink.buffer();
}

/** Writes a random-weight llama GGUF at `path` (through a temporary name, so a reader never sees half a file). */
export async function writeRandomGguf(path: string, options: RandomGgufOptions = {}): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const temporary = `${path}.${process.pid}.partial`;
  await writeFile(temporary, randomGgufBytes(options));
  await rename(temporary, path);
}

/** The pipeline-check model's id: a models folder without it gets it on the platform's first start. */
export const PIPELINE_CHECK_MODEL = 'pipeline-check';

/** Writes `pipeline-check.gguf` into the models folder unless it is there; returns its path. */
export async function ensurePipelineCheckGguf(modelsDir: string): Promise<string> {
  const path = join(modelsDir, `${PIPELINE_CHECK_MODEL}.gguf`);
  try {
    await access(path);
  } catch {
    await writeRandomGguf(path, { name: PIPELINE_CHECK_MODEL });
  }
  return path;
}
