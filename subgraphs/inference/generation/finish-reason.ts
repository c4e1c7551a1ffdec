import { registerEnumType } from '../../shared/type-graphql.js';

/** Why a generation ended: a stop sequence or the model's end (STOP), or maxTokens or the context (LENGTH). */
export enum FinishReason {
  STOP = 'stop',
  LENGTH = 'length',
  /** The model called tools (chat with tools only). */
  TOOL_CALLS = 'tool_calls',
}

registerEnumType(FinishReason, { name: 'InferenceFinishReason' });
