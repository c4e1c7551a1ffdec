import { registerEnumType } from '../../shared/type-graphql.js';

export enum ModelStatus {
  READY = 'ready',
  LOADING = 'loading',
  FAILED = 'failed',
}

registerEnumType(ModelStatus, { name: 'InferenceModelStatus', description: 'Whether a model answers now: LOADING models are refused with SERVICE_UNAVAILABLE until ready.' });
