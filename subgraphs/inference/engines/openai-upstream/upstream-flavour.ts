import type { GenerationInput, Guided, GuidedParam, SamplingParam, SamplingParams, TextEngine } from '../../engine/text-engine.js';
import { EngineError, GUIDED_PARAMS, SAMPLING_PARAMS } from '../../engine/text-engine.js';
import { choiceToGbnf, regexToGbnf } from '../../engine/regex-grammar.js';

/** The OpenAI-compatible servers whose behaviour differs where it matters to the engine. */
export const UPSTREAM_FLAVOURS = ['vllm', 'llama.cpp', 'ollama', 'openai'] as const;

export type UpstreamFlavour = (typeof UPSTREAM_FLAVOURS)[number];

type UnsupportedName = TextEngine['unsupported'] extends ReadonlySet<infer T> ? T : never;

// Names every OpenAI-compatible server takes on /v1/chat/completions and /v1/completions.
const COMMON_WIRE: Partial<Record<SamplingParam, string>> = {
  temperature: 'temperature',
  topP: 'top_p',
  maxTokens: 'max_tokens',
  stop: 'stop',
  seed: 'seed',
  presencePenalty: 'presence_penalty',
  frequencyPenalty: 'frequency_penalty',
};

// Wire names per flavour, from each server's documented request parameters:
// - vLLM: its sampling parameters include top_k, min_p and repetition_penalty (vllm/sampling_params.py);
//   typical_p, tfs, top_a, mirostat, DRY and no_repeat_ngram_size are not among them.
// - llama.cpp server: the /completion options (also read on the OpenAI routes) name the repetition
//   penalty repeat_penalty and take typical_p, dry_multiplier, dry_base, dry_allowed_length and
//   mirostat; tail-free sampling (tfs_z) was removed from llama.cpp, top_a and n-gram bans never existed.
// - Ollama's OpenAI endpoint documents only the OpenAI fields (no top_k, min_p or repeat penalty there).
// - OpenAI: its own fields only.
const WIRE: Record<UpstreamFlavour, Partial<Record<SamplingParam, string>>> = {
  vllm: { ...COMMON_WIRE, topK: 'top_k', minP: 'min_p', repetitionPenalty: 'repetition_penalty' },
  'llama.cpp': {
    ...COMMON_WIRE,
    topK: 'top_k',
    minP: 'min_p',
    repetitionPenalty: 'repeat_penalty',
    typicalP: 'typical_p',
    dryMultiplier: 'dry_multiplier',
    dryBase: 'dry_base',
    dryAllowedLength: 'dry_allowed_length',
    mirostat: 'mirostat',
  },
  ollama: { ...COMMON_WIRE },
  openai: { ...COMMON_WIRE },
};

// vLLM 0.12+ ignores guided_* silently, so only structured_outputs is sent; llama.cpp constrains
// with json_schema or a GBNF grammar (choices and regular expressions are translated to one);
// OpenAI and Ollama take a JSON schema only.
const GUIDED: Record<UpstreamFlavour, ReadonlySet<GuidedParam>> = {
  vllm: new Set(['guided_json', 'guided_regex', 'guided_choice']),
  'llama.cpp': new Set(['guided_json', 'guided_regex', 'guided_choice']),
  ollama: new Set(['guided_json']),
  openai: new Set(['guided_json']),
};


/** The parameters a flavour cannot honour, for the engine's `unsupported` set. */
export function unsupportedFor(flavour: UpstreamFlavour): ReadonlySet<UnsupportedName> {
  return new Set<UnsupportedName>([...SAMPLING_PARAMS.filter((param) => !WIRE[flavour][param]), ...GUIDED_PARAMS.filter((param) => !GUIDED[flavour].has(param))]);
}

/** The sampling parameters under the flavour's wire names; a parameter it lacks is refused, never dropped. */
export function samplingBody(flavour: UpstreamFlavour, sampling: SamplingParams): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const [param, value] of Object.entries(sampling) as [SamplingParam, unknown][]) {
    if (value === undefined) continue;
    const wire = WIRE[flavour][param];
    if (!wire) throw unsupportedParameter(flavour, param);
    body[wire] = value;
  }
  return body;
}

/** The guided-output fields the flavour understands, for chat or completion input. */
export function guidedBody(flavour: UpstreamFlavour, guided: Guided | undefined, input: GenerationInput): Record<string, unknown> {
  if (!guided) return {};
  const param: GuidedParam = `guided_${guided.kind}`;
  if (!GUIDED[flavour].has(param)) throw unsupportedParameter(flavour, param);
  switch (flavour) {
    case 'vllm':
      // StructuredOutputsParams' fields are json, regex and choice (vllm/sampling_params.py).
      if (guided.kind === 'json') return { structured_outputs: { json: guided.schema } };
      if (guided.kind === 'regex') return { structured_outputs: { regex: guided.pattern } };
      return { structured_outputs: { choice: guided.choices } };
    case 'llama.cpp':
      if (guided.kind === 'json') return { json_schema: guided.schema };
      if (guided.kind === 'choice') return { grammar: choiceToGbnf(guided.choices) };
      return { grammar: regexToGbnf(guided.pattern) };
    case 'ollama':
    case 'openai':
      // response_format exists on chat only: the legacy completions route has no structured output.
      if (input.kind !== 'chat') throw new EngineError('unsupported_parameter', `${param} needs chat input on this upstream (${flavour})`, param);
      if (guided.kind !== 'json') throw unsupportedParameter(flavour, param);
      return {
        response_format: {
          type: 'json_schema',
          json_schema: flavour === 'openai' ? { name: 'guided', schema: guided.schema, strict: true } : { name: 'guided', schema: guided.schema },
        },
      };
  }
}

function unsupportedParameter(flavour: UpstreamFlavour, param: string): EngineError {
  return new EngineError('unsupported_parameter', `${wireName(param)} is not supported by the upstream engine (${flavour})`, wireName(param));
}

// The spec's snake_case name, which is what a client sent.
function wireName(param: string): string {
  return param.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
}
