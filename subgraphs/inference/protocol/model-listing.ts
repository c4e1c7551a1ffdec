import type { ImageModel, ProviderModel } from '../provider-registry/provider-registry.js';

/**
 * The model listing every interface answers with: OpenAI's model object, plus what a client
 * choosing a model needs (context length, modalities, status, the providers serving it). The
 * OpenAI-compatible routes send it as is; GraphQL's `models` reads the same entries.
 */

// The listing's `created`: when this process started, the same for every entry and call.
const LISTED_AT = Math.floor(Date.now() / 1000);

export interface ListedModel {
  id: string;
  object: 'model';
  created: number;
  owned_by: string;
  /** Every provider serving the id on this interface, the one in `owned_by` first. */
  providers: string[];
  /** Text models only. */
  context_length?: number;
  /** vLLM's name for the same figure, read by clients written against vLLM. */
  max_model_len?: number;
  input_modalities: ('text' | 'image')[];
  /** text for text models, image for image models (the WebUI's checkpoints). */
  output_modalities: ('text' | 'image')[];
  /** Vision models: whether an image may come as an http(s) URL, or only as a base64 data URI. */
  image_url_input?: boolean;
  status: string;
  /** Text models: whether POST /v1/embeddings serves it (some provider serving it embeds). */
  embeddings?: boolean;
  alias_of?: string;
  available_on_current_plan?: boolean;
}

/**
 * A list entry per model id; a model several providers serve is listed once, owned by the
 * preferred provider (`prefer`, else the first). `urlImages` false lists every vision model as
 * base64-only (the gateway's rule); `onPlan` marks what the caller's plan includes.
 */
export function listedModels(models: ProviderModel[], options: { prefer?: string; urlImages: boolean | 'per-model'; onPlan?: (model: ProviderModel) => boolean }): ListedModel[] {
  const byId = new Map<string, ProviderModel[]>();
  for (const model of models) byId.set(model.id, [...(byId.get(model.id) ?? []), model]);
  return [...byId.values()].map((serving) => {
    const owner = serving.find((m) => m.provider === options.prefer) ?? serving[0]!;
    const vision = owner.model.inputModalities.includes('image');
    return {
      id: owner.id,
      object: 'model',
      created: LISTED_AT,
      owned_by: owner.provider,
      providers: [owner.provider, ...serving.filter((m) => m !== owner).map((m) => m.provider)],
      context_length: owner.model.contextLength,
      max_model_len: owner.model.contextLength,
      input_modalities: owner.model.inputModalities,
      output_modalities: ['text'],
      ...(vision ? { image_url_input: options.urlImages === 'per-model' ? serving.some((m) => m.model.urlImageInput) : options.urlImages } : {}),
      status: owner.model.status,
      embeddings: serving.some((m) => m.model.embeddings === true),
      ...(owner.aliasOf ? { alias_of: owner.aliasOf } : {}),
      ...(options.onPlan ? { available_on_current_plan: serving.some(options.onPlan) } : {}),
    };
  });
}

/**
 * A list entry per image model (a WebUI checkpoint, by the model name images/generations takes
 * as `model`), once whatever the number of providers serving it, owned by `prefer` when it does.
 */
export function listedImageModels(models: ImageModel[], prefer?: string): ListedModel[] {
  const byId = new Map<string, ImageModel[]>();
  for (const model of models) byId.set(model.id, [...(byId.get(model.id) ?? []), model]);
  return [...byId.values()].map((serving) => {
    const owner = serving.find((m) => m.provider === prefer) ?? serving[0]!;
    return {
      id: owner.id,
      object: 'model',
      created: LISTED_AT,
      owned_by: owner.provider,
      providers: [owner.provider, ...serving.filter((m) => m !== owner).map((m) => m.provider)],
      // A prompt, and for img2img and edits an image.
      input_modalities: ['text', 'image'],
      output_modalities: ['image'],
      status: serving.some((m) => m.status === 'ready') ? 'ready' : owner.status,
    };
  });
}
