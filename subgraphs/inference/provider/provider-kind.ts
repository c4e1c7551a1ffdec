import { registerEnumType } from '../../shared/type-graphql.js';

/** What a provider serves, in the specification's own words for Service T and Service I. */
export enum ProviderKind {
  TEXT_AND_VISION = 'text_and_vision',
  IMAGE_AND_TEXT = 'image_and_text',
}

registerEnumType(ProviderKind, {
  name: 'ProviderKind',
  valuesConfig: {
    TEXT_AND_VISION: { description: 'Chat, completion and token counting; vision models also read images.' },
    IMAGE_AND_TEXT: { description: 'Stable-Diffusion-style image generation as well as the text endpoints.' },
  },
});
