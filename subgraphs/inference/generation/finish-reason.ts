import { registerEnumType } from '../../shared/type-graphql.js';

/** Why a generation ended: a stop sequence or the model's end (STOP), or maxTokens or the context (LENGTH). */
export enum FinishReason {
  STOP = 'stop',
  LENGTH = 'length',
}

registerEnumType(FinishReason, { name: 'InferenceFinishReason' });
